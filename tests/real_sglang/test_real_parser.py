"""Against the REAL SGLang 0.5.23 argument parser (not the simulator): canonicalisation and
drift."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from sglconsole.core import drift
from sglconsole.core.drift import State
from sglconsole.core.flag_hints import did_you_mean
from sglconsole.remote.sglang_args import canonicalize_local

PROVEN = [
    "--model-path",
    "/root/models/Qwen3.6-27B",
    "--port",
    "30000",
    "--host",
    "0.0.0.0",
    "--tp-size",
    "2",
    "--mem-fraction-static",
    "0.88",
    "--context-length",
    "131072",
    "--max-running-requests",
    "16",
    "--mamba-full-memory-ratio",
    "0.5",
    "--reasoning-parser",
    "qwen3",
    "--tool-call-parser",
    "qwen3_coder",
    "--speculative-algorithm",
    "NEXTN",
    "--speculative-num-steps",
    "3",
    "--speculative-eagle-topk",
    "1",
    "--speculative-num-draft-tokens",
    "4",
    "--trust-remote-code",
]
DRIFTED = [
    "--model-path",
    "/root/models/Qwen3.6-27B",
    "--tp-size",
    "2",
    "--speculative-algo",
    "NEXTN",
    "--speculative-num-draft-tokens",
    "2",
    "--speculative-num-steps",
    "1",
]
REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def verdict(real_python):
    result = canonicalize_local(
        real_python,
        {
            "proven": PROVEN,
            "drifted": DRIFTED,
            "algo": ["--model-path", "m", "--speculative-algo", "NEXTN"],
            "algorithm": ["--model-path", "m", "--speculative-algorithm", "NEXTN"],
            "tp": ["--model-path", "m", "--tp", "2"],
            "tp_size": ["--model-path", "m", "--tp-size", "2"],
            "old": ["--model-path", "m", "--mamba-scheduler-strategy", "extra_buffer"],
        },
    )
    assert result.ok, result.error
    return result


def test_the_real_parser_reports_its_version(verdict):
    assert verdict.version == "0.5.23"
    assert "speculative_num_steps" in verdict.actions


def test_prefix_and_alias_mean_the_same(verdict):
    algo, algorithm = verdict.results["algo"], verdict.results["algorithm"]
    assert algo.values == algorithm.values and algo.given == algorithm.given
    assert verdict.results["tp"].values == verdict.results["tp_size"].values


def test_the_seed_commands_differ_where_it_matters(verdict):
    p, r = verdict.results["proven"], verdict.results["drifted"]
    report = drift.build(
        profile_values=p.values,
        profile_given=p.given,
        running_values=r.values,
        running_given=r.given,
        flag_of=verdict.flag_of,
        profile_env={"SGLANG_ENABLE_SPEC_V2": "1"},
        running_env={},
    )
    rows = {row.name: row for row in report.rows}
    assert rows["speculative_num_steps"].state == State.DIFFERENT and (
        rows["speculative_num_steps"].profile,
        rows["speculative_num_steps"].running,
    ) == (3, 1)
    assert rows["speculative_num_draft_tokens"].state == State.DIFFERENT
    for dest in ("context_length", "max_running_requests", "mem_fraction_static"):
        assert rows[dest].state == State.ONLY_PROFILE, rows[dest]
    assert rows["speculative_algorithm"].state == State.SAME  # --speculative-algo is a prefix
    assert rows["SGLANG_ENABLE_SPEC_V2"].state == State.ONLY_PROFILE
    assert report.rows[0].state != State.SAME and report.rows[0].performance  # differences first


def test_a_removed_flag_is_unknown_with_argparse_text_and_a_hint(verdict):
    error = verdict.results["old"].error
    assert (
        error.splitlines()[-1]
        == "sglang serve: error: unrecognized arguments: --mamba-scheduler-strategy extra_buffer"
    )
    assert "--mamba-radix-cache-strategy" in did_you_mean(error, verdict.all_flags())


def test_argdiff_cli_with_the_real_sglang(real_python):
    def run(*args):
        command = [sys.executable, "-m", "sglconsole", "argdiff", "--python", real_python, *args]
        return subprocess.run(command, capture_output=True, text=True, timeout=180)

    proven = "SGLANG_ENABLE_SPEC_V2=1 python -m sglang.launch_server " + " ".join(PROVEN)
    asked = {
        "drift": ("--json", proven, " ".join(DRIFTED)),
        "same": (
            " ".join(DRIFTED),
            " ".join(DRIFTED).replace("--speculative-algo", "--speculative-algorithm"),
        ),
        "bad": (
            "--json",
            "--model-path m --mamba-scheduler-strategy extra_buffer",
            " ".join(DRIFTED),
        ),
        "typo": ("--model-path m --speculative-num-stpes 3", " ".join(DRIFTED)),
    }
    # at once: each run imports the real SGLang (torch with it), ~4 s of one core, mostly waited
    # for one after another
    with ThreadPoolExecutor(len(asked)) as pool:
        runs = dict(zip(asked, pool.map(lambda args: run(*args), asked.values()), strict=True))
    result = runs["drift"]
    assert result.returncode == 1, result.stderr
    data = json.loads(result.stdout)
    assert data["version"] == "0.5.23"
    states = {row["dest"]: row["state"] for row in data["rows"]}
    assert (
        states["speculative_num_steps"] == "DIFFERENT"
        # the real 0.5.23's sglang/srt/environ.py does not declare it: no effect there
        and states["SGLANG_ENABLE_SPEC_V2"] == "NO_EFFECT"
    )
    same = runs["same"]
    assert same.returncode == 0, same.stdout + same.stderr
    bad = runs["bad"]
    assert bad.returncode == 2 and "unrecognized arguments" in json.loads(bad.stdout)["errors"]["a"]
    typo = runs["typo"]
    assert typo.returncode == 2 and "did you mean" in typo.stdout
    assert len(typo.stdout.splitlines()) < 10, typo.stdout[:2000]  # not SGLang's 600-line usage


def test_the_simulators_flag_table_is_the_real_parser(real_python, tmp_path):
    out = tmp_path / "table.json"
    subprocess.run(
        [real_python, str(REPO / "tools" / "gen_flag_table.py"), str(out)],
        check=True,
        capture_output=True,
        timeout=300,
        env={k: v for k, v in os.environ.items() if not k.startswith("SGLANG_")},
    )
    fresh = json.loads(out.read_text())
    committed = json.loads(
        (REPO / "sglconsole" / "data" / "flags" / "sglang-0.5.23.json").read_text()
    )
    assert fresh["actions"] == committed["actions"], (
        "SGLang's parser changed: regenerate sglconsole/data/flags/"
    )
