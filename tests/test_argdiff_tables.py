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


def test_a_chosen_version_uses_its_table_or_the_newest_older_one():
    result = argdiff("--model-path m", "--model-path m", "--json", "--sglang-version", "0.5.10")
    out = json.loads(result.stdout)
    assert result.returncode == 0 and out["version"] == "0.5.9" and out["schema_version"]
    assert "flag table of SGLang 0.5.9" in result.stderr
    typo = argdiff("--model-path m --tp-sise 2", "--model-path m", "--sglang-version", "0.5.23")
    assert typo.returncode == 2 and "did you mean --tp-size?" in typo.stdout
    too_old = argdiff("--model-path m", "--model-path m", "--sglang-version", "0.1")
    assert too_old.returncode == 2 and "no SGLang flag table for 0.1" in too_old.stderr


@pytest.mark.parametrize("version", available_versions())
def test_the_console_reads_a_table_as_the_simulator_does(version):
    argv = ["--model-path", "m", "--tp", "2", "--mem-fraction-static", "0.8", "--enable-metrics"]
    judged = parse(load_table(version), {"a": argv})["results"]["a"]
    simulated = vars(flagtable.build_parser(version).parse_args(argv))
    assert judged["error"] is None and judged["values"] == json.loads(json.dumps(simulated))
    assert {"model_path", "mem_fraction_static", "enable_metrics"} <= set(judged["given"])
