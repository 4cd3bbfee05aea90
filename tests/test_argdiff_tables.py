"""argdiff without SGLang installed: the flag tables shipped in sglconsole/data/flags/ judge."""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys

import pytest

from sglconsole.config.flag_tables import available_versions, load_table
from sglconsole.core.flag_table import parse
from sglconsole.sim import flagtable

NO_SGLANG = importlib.util.find_spec("sglang") is None


def argdiff(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "sglconsole", "argdiff", *args],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "COLUMNS": "200"},
    )


@pytest.mark.skipif(not NO_SGLANG, reason="SGLang is importable here: it judges, not the tables")
def test_without_sglang_the_newest_table_judges_and_says_so_in_one_line():
    same = argdiff("--model-path m --tp 2", "--model m --tp-size 2")
    newest = available_versions()[-1]
    assert same.returncode == 0, same.stderr
    assert same.stderr.strip().splitlines() == [
        f"argdiff: SGLang is not importable here: judged by the flag table of SGLang {newest}"
        f" shipped with sglconsole (--sglang-version X picks another:"
        f" {', '.join(available_versions())})"
    ]
    assert f"SGLang {newest} (flag table shipped with sglconsole)" in same.stdout
    differ = argdiff("--model-path m --mem-fraction-static 0.8", "--model-path m", "--json")
    out = json.loads(differ.stdout)
    assert differ.returncode == 1 and out["source"] == "flag-table" and out["version"] == newest
    assert any(r["flag"] == "--mem-fraction-static" and r["state"] != "SAME" for r in out["rows"])


def test_a_chosen_version_uses_its_own_table_and_a_newer_one_says_so_in_one_line():
    result = argdiff("--model-path m", "--model-path m", "--json", "--sglang-version", "0.5.10")
    out = json.loads(result.stdout)
    assert result.returncode == 0 and out["version"] == "0.5.10" and out["schema_version"]
    assert result.stderr.strip().splitlines() == [
        "argdiff: judged by the flag table of SGLang 0.5.10 shipped with sglconsole"
    ]
    post = argdiff("--model-path m", "--model-path m", "--json", "--sglang-version", "0.5.12.post1")
    assert post.returncode == 0 and json.loads(post.stdout)["version"] == "0.5.12"
    newest = available_versions()[-1]
    future = "0.5.999"
    newer = argdiff("--model-path m", "--model-path m", "--json", "--sglang-version", future)
    assert newer.returncode == 0 and json.loads(newer.stdout)["version"] == newest
    assert newer.stderr.strip().splitlines() == [
        f"argdiff: SGLang {future} is newer than the newest table ({newest}):"
        f" judged with {newest}'s (flag table shipped with sglconsole)"
    ]
    typo = argdiff("--model-path m --tp-sise 2", "--model-path m", "--sglang-version", "0.5.23")
    assert typo.returncode == 2 and "did you mean --tp-size?" in typo.stdout
    too_old = argdiff("--model-path m", "--model-path m", "--sglang-version", "0.1")
    assert too_old.returncode == 2 and "no SGLang flag table for 0.1" in too_old.stderr
    assert "older than the oldest table (0.5.9)" in too_old.stderr
    garbage = argdiff("--model-path m", "--model-path m", "--sglang-version", "latest")
    assert garbage.returncode == 2 and "not an SGLang version: 'latest'" in garbage.stderr


def _options(version: str) -> set[str]:
    actions = load_table(version)["actions"]
    return {o for a in actions for o in a["option_strings"] if o.startswith("--")}


def _first_new_flag(version: str) -> tuple[str, str]:
    """A flag `version` brought (no earlier spelling is a prefix of it), and the release before."""
    versions = available_versions()
    before = versions[versions.index(version) - 1]
    old = _options(before)
    new = sorted(
        o
        for o in _options(version) - old
        if not any(p.startswith(o) or o.startswith(p) for p in old)
    )
    return new[0], before


@pytest.mark.parametrize("version", available_versions()[1:])
def test_each_version_is_judged_by_its_own_table(version):
    """A flag a release brought is taken by that release and refused by the one before:
    a release between two others is not judged by a neighbour's table."""
    flag, before = _first_new_flag(version)
    value = _a_value(version, flag)
    a, b = f"--model-path m {flag}{value}", "--model-path m"
    mine = argdiff(a, b, "--sglang-version", version, "--json")
    assert mine.returncode in (0, 1), (flag, mine.stdout, mine.stderr)  # taken (same or differs)
    assert json.loads(mine.stdout)["version"] == version
    theirs = argdiff(f"--model-path m {flag}{value}", "--model-path m", "--sglang-version", before)
    assert theirs.returncode == 2 and flag in theirs.stdout + theirs.stderr, (flag, theirs.stdout)


def _a_value(version: str, flag: str) -> str:
    """What to write after `flag` so that its own release takes it."""
    action = next(a for a in load_table(version)["actions"] if flag in a["option_strings"])
    if action["nargs"] == 0 or action["kind"] in ("store_true", "store_false", "boolean_optional"):
        return ""
    return f" {action['choices'][0]}" if action["choices"] else " 1"


@pytest.mark.parametrize("version", available_versions())
def test_the_console_reads_a_table_as_the_simulator_does(version):
    argv = ["--model-path", "m", "--tp", "2", "--mem-fraction-static", "0.8", "--enable-metrics"]
    judged = parse(load_table(version), {"a": argv})["results"]["a"]
    simulated = vars(flagtable.build_parser(version).parse_args(argv))
    assert judged["error"] is None and judged["values"] == json.loads(json.dumps(simulated))
    assert {"model_path", "mem_fraction_static", "enable_metrics"} <= set(judged["given"])
