"""parse-log and log-stats from the command line, on real log text."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from tests.cli import cli as run_cli

DATA = Path(__file__).parent / "data" / "sglang_logs"


def cli(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess:
    return run_cli(*args, stdin=stdin, timeout=60)


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


REAL_0512 = Path(__file__).parent / "fixtures" / "real-sglang-0.5.12-h200" / "sglang-30000.log"


def test_log_stats_keeps_each_server_run_apart_with_editor_line_numbers():
    """The real H200 log holds three launches appended to one file; its progress bars write \\r."""
    data = json.loads(cli("log-stats", str(REAL_0512), "--json").stdout)
    runs = data["runs"]
    assert [(r["first_line"], r["pid"]) for r in runs] == [(1, 521), (138, 2535), (210, 3216)]
    assert runs[-1]["last_line"] == data["lines"] == len(REAL_0512.read_bytes().split(b"\n")) - 1
    lines = REAL_0512.read_bytes().decode().split("\n")
    for error in data["errors"]:  # a line number is the one an editor shows
        assert error["message"].split("\n")[0][:40] in lines[error["line"] - 1]
    assert runs[0]["gen_throughput"]["n"] == 6 and runs[1]["gen_throughput"] is None
    table = cli("log-stats", str(REAL_0512)).stdout
    assert "3 server runs" in table and "run 2: lines 138-209, pid 2535" in table
    assert "line None" not in table and "line 55: ModuleNotFoundError" in table


def test_log_stats_of_a_file_that_is_not_an_sglang_log_fails(tmp_path):
    other = tmp_path / "syslog"
    other.write_text("Dec  4 06:00:01 host CRON[1]: (root) CMD (true)\n" * 3)
    result = cli("log-stats", str(other))
    assert result.returncode == 1 and "not an SGLang log" in result.stderr
    assert result.stdout == ""
