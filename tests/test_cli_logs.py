"""parse-log and log-stats from the command line, on real log text."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

DATA = Path(__file__).parent / "data" / "sglang_logs"


def cli(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "sglconsole", *args],
        capture_output=True,
        text=True,
        input=stdin,
        timeout=60,
    )


def test_parse_log_jsonl_has_field_names_and_line_numbers():
    log = DATA / "v0.5.23-format.log"
    result = cli("parse-log", str(log), "--jsonl")
    assert result.returncode == 0, result.stderr
    records = [json.loads(line) for line in result.stdout.splitlines()]
    decodes = [r for r in records if r["kind"] == "decode"]
    assert decodes and all(
        "gen_throughput" in r and "accept_len" in r and "extra" in r for r in decodes
    )
    lines = log.read_text().splitlines()
    for record in records:
        assert lines[record["lineno"] - 1].strip(), record  # lineno points at the line it came from


def test_parse_log_reads_stdin():
    line = (
        "[2026-01-01 12:00:00 TP0] Decode batch, #running-req: 3, #token: 10, token usage: 0.01, "
        "cuda graph: True, gen throughput (token/s): 55.50, #queue-req: 0"
    )
    result = cli("parse-log", "-", "--jsonl", stdin="noise\n" + line + "\n")
    (record,) = [json.loads(x) for x in result.stdout.splitlines()]
    assert record["lineno"] == 2 and record["gen_throughput"] == 55.5 and record["tp_rank"] == 0


def test_log_stats_json_and_table():
    log = DATA / "v0.5.23-format.log"
    data = json.loads(cli("log-stats", str(log), "--json").stdout)
    assert data["counts"]["decode"] > 0
    table = cli("log-stats", str(log))
    assert table.returncode == 0 and "gen_throughput" in table.stdout


def test_log_stats_of_a_missing_file_is_a_clear_error():
    result = cli("log-stats", "/nonexistent/sglang.log")
    assert result.returncode == 2 and "/nonexistent/sglang.log" in result.stderr
