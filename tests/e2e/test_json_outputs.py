"""JSON on stdout: a closed pipe ends a command quietly, `status --watch --json` is JSON Lines,
every top-level JSON object carries `schema_version`."""

from __future__ import annotations

import json
import shlex
import signal
import subprocess
import sys
from pathlib import Path

import jsonschema
import yaml

from sglconsole.commands.schema import render
from sglconsole.state.status_schema import StatusJson
from tests.cli import cli, ctrl_c_default

LOGS = Path(__file__).parents[1] / "data" / "sglang_logs"
SGLCONSOLE = f"{shlex.quote(sys.executable)} -m sglconsole"


def piped(command: str, reader: str, timeout: float = 120) -> subprocess.CompletedProcess:
    """`sglconsole COMMAND | READER` through a real shell; the exit status is sglconsole's."""
    return subprocess.run(
        ["bash", "-c", f"set -o pipefail; {SGLCONSOLE} {command} | {reader}"],
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def test_a_closed_stdout_ends_parse_log_quietly(tmp_path):
    big = tmp_path / "big.log"
    text = "".join(p.read_text() for p in sorted(LOGS.glob("*.log")))
    big.write_text(text * 200)  # far more than a pipe holds
    result = piped(f"parse-log {big}", "head -1")
    assert json.loads(result.stdout)["lineno"] >= 1
    assert result.stderr == "" and result.returncode == 141


def test_a_closed_stdout_ends_probe_json_quietly(demo_fleet):
    # `true` never reads: the JSON is written when the probe is done, into a pipe nobody holds
    result = piped(f"probe -c {demo_fleet.config_path} ct129:30000 --json", "true")
    assert "Traceback" not in result.stderr and "BrokenPipe" not in result.stderr
    assert result.stderr == "" and result.returncode == 141


def test_probe_json_carries_schema_version(demo_fleet):
    result = cli("probe", "-c", str(demo_fleet.config_path), "ct129:30000", "--json")
    out = json.loads(result.stdout)
    assert out["schema_version"] == "1.0" and out["action"] == "probe"


def test_diff_and_log_stats_json_carry_schema_version(demo_fleet):
    diff = json.loads(cli("diff", "-c", str(demo_fleet.config_path), "ct129", "--json").stdout)
    assert diff["schema_version"] == "1.1" and "ct129:30000" in diff
    assert diff["ct129:30000"]["container"] == []  # 1.1: no container on either side
    log = next(iter(sorted(LOGS.glob("*.log"))))
    stats = json.loads(cli("log-stats", str(log), "--json").stdout)
    assert stats["schema_version"] == "1.0" and stats["records"] > 0


def test_status_watch_json_is_json_lines(demo_fleet):
    process = subprocess.Popen(
        [sys.executable, "-m", "sglconsole", "status", "-c", str(demo_fleet.config_path)]
        + ["--watch", "--json"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=ctrl_c_default,
    )
    try:
        lines = [process.stdout.readline() for _ in range(2)]
    finally:
        process.send_signal(signal.SIGINT)
        process.wait(timeout=30)
    assert process.returncode == 130, process.stderr.read()  # Ctrl-C: interrupted, as README says
    first, second = (json.loads(line) for line in lines)
    schema = json.loads(render("status"))
    for record in (first, second):
        assert record["schema_version"] == "1.6" and set(record["hosts"]) == {
            "ct129",
            "ct130",
            "h200x4",
            "old059",
        }
        assert "drift_not_known" in record
        jsonschema.validate(record, schema)
    assert second["generated_at"] > first["generated_at"]


def test_status_json_and_the_demo_hosts_yaml_match_their_schemas(demo_fleet):
    out = json.loads(cli("status", "-c", str(demo_fleet.config_path), "--json").stdout)
    jsonschema.validate(out, json.loads(render("status")))
    StatusJson.model_validate(out)  # every key is in the model (extra keys are errors)
    servers = [s for h in out["hosts"].values() for s in h["servers"]]
    assert servers and all(s["status"] for s in servers)
    hosts_yaml = yaml.safe_load(demo_fleet.config_path.read_text())
    jsonschema.validate(hosts_yaml, json.loads(render("hosts")))


def test_status_watch_table_exits_130_on_ctrl_c(demo_fleet):
    process = subprocess.Popen(
        [sys.executable, "-m", "sglconsole", "status", "-c", str(demo_fleet.config_path)]
        + ["--watch"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=ctrl_c_default,
    )
    try:
        # a one-shot status of the demo takes ~3 s: past that the live table refreshes
        assert process.wait(timeout=8) is None, process.stderr.read()
    except subprocess.TimeoutExpired:
        pass
    finally:
        process.send_signal(signal.SIGINT)
        process.wait(timeout=30)
    assert process.returncode == 130, process.stderr.read()
