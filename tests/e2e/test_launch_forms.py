"""Servers started the newer ways: `sglang serve MODEL` (the model as its first argument, 0.5.16+)
and `--config FILE` (a YAML SGLang merges into the argv) are found, compared by meaning, captured
and relaunched (issue #24 item 5)."""

from __future__ import annotations

import json
import time

import yaml

from sglconsole.sim.fleet.scenarios import QWEN8B
from sglconsole.sim.fleet.start import HostSpec, ServerSpec
from tests.cli import cli

# QWEN8B's flags, as a config file holds them (SGLang turns each key into --KEY)
SAME_AS_PROFILE = (
    "# the ops team's launch file\n"
    "tp-size: 1\n"
    "mem-fraction-static: 0.85\n"
    "max-running-requests: 64\n"
    "enable-metrics: true\n"
    "decode-log-interval: 40\n"
)


def _host(name: str, running: list[str], entry: str = "launch_server", **extra) -> HostSpec:
    return HostSpec(
        name=name,
        gpu_model="H200",
        gpu_count=1,
        models=("Qwen3-8B",),
        sglang={"startup_s": 0.5, "load": {"concurrency": 1, "max_tokens": 200}},
        servers=[ServerSpec(30000, "qwen8b-tp1", [0], running=running, entry=entry)],
        **extra,
    )


def _up(path: str, host: str) -> dict:
    deadline = time.monotonic() + 40
    while True:
        (server,) = json.loads(cli("status", "-c", path, "--json").stdout)["hosts"][host]["servers"]
        if server["health"] == "ok" or time.monotonic() > deadline:
            return server
        time.sleep(0.5)


def _rows(path: str, target: str) -> tuple[int, dict]:
    result = cli("diff", "-c", path, target, "--json")
    data = json.loads(result.stdout) if result.stdout.strip().startswith("{") else {}
    report = data.get(target) or {}
    return result.returncode, {row["dest"]: row for row in report.get("rows", [])}


def test_sglang_serve_with_the_model_as_its_argument_is_compared_captured_and_relaunched(
    fleet_factory, tmp_path, monkeypatch
):
    """Before: `sglang serve MODEL ...` reached the parser with MODEL as a stray argument
    ("unrecognized arguments"), and capture wrote MODEL into a profile that could not start."""
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    positional = ["{models}/Qwen3-8B", *QWEN8B[2:]]  # `sglang serve MODEL --host ...`
    fleet = fleet_factory([_host("serve1", positional, entry="serve")])
    path = str(fleet.config_path)
    server = _up(path, "serve1")
    assert server["health"] == "ok" and server["argv"][2] == "serve", server
    assert server["argv"][3].endswith("/models/Qwen3-8B"), server["argv"]  # no --model-path
    diff = cli("diff", "-c", path, "serve1:30000")
    assert diff.returncode == 0, diff.stdout + diff.stderr
    assert "matches the profile" in diff.stdout
    captured = cli("capture", "-c", path, "serve1:30000", "--as", "from-serve")
    assert captured.returncode == 0, captured.stdout + captured.stderr
    data = yaml.safe_load(fleet.config_path.read_text())
    args = data["profiles"]["from-serve"]["args"]
    # the form every release accepts (the positional needs 0.5.16, `sglang serve` 0.5.10)
    assert args[:2] == [
        "--model-path",
        positional[0].replace("{models}", fleet.hosts["serve1"].seen("models")),
    ], args
    data["hosts"]["serve1"]["servers"][0]["profile"] = "from-serve"
    fleet.config_path.write_text(yaml.safe_dump(data, sort_keys=False))
    relaunched = cli("relaunch", "-c", path, "serve1:30000", "--yes", timeout=180)
    assert relaunched.returncode == 0, relaunched.stdout + relaunched.stderr
    server = _up(path, "serve1")
    assert "sglang.launch_server" in server["argv"] and server["health"] == "ok", server
    again = cli("diff", "-c", path, "serve1:30000")
    assert again.returncode == 0 and "matches the profile" in again.stdout, again.stdout
    # and a rollback brings back the server exactly as it was run: `sglang serve MODEL`
    back = cli("rollback", "-c", path, "serve1:30000", "--yes", timeout=180)
    assert back.returncode == 0, back.stdout + back.stderr
    server = _up(path, "serve1")
    assert server["argv"][2] == "serve" and server["argv"][3].endswith("/models/Qwen3-8B"), server


def test_a_config_file_is_read_from_the_host_and_compared_key_by_key(
    fleet_factory, tmp_path, monkeypatch
):
    """Before: the running side was its argv alone (`--config FILE`), so every flag the file set
    read as the profile's only and a changed file went unseen."""
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    running = [*QWEN8B[:4], "--config", "{models}/qwen8b.yaml"]
    fleet = fleet_factory([_host("cfg1", running, files={"models/qwen8b.yaml": SAME_AS_PROFILE})])
    path = str(fleet.config_path)
    server = _up(path, "cfg1")
    assert server["health"] == "ok" and "--config" in server["argv"], server
    code, rows = _rows(path, "cfg1:30000")
    assert code == 0, rows
    assert rows["max_running_requests"]["state"] == "SAME", rows["max_running_requests"]
    assert rows["enable_metrics"]["state"] == "SAME", rows["enable_metrics"]

    yaml_file = fleet.hosts["cfg1"].root / "models" / "qwen8b.yaml"
    yaml_file.write_text(
        SAME_AS_PROFILE.replace("max-running-requests: 64", "max-running-requests: 32")
    )
    code, rows = _rows(path, "cfg1:30000")
    assert code == 1, rows  # DRIFT: the file now says something else
    row = rows["max_running_requests"]
    assert row["state"] == "DIFFERENT" and row["running"] == 32 and row["profile"] == 64, row
    (watched,) = json.loads(cli("status", "-c", path, "--json").stdout)["hosts"]["cfg1"]["servers"]
    assert watched["drift"] is True, watched  # (its status may rank SLOW above DRIFT)
    shown = cli("diff", "-c", path, "cfg1:30000")
    assert "qwen8b.yaml" in shown.stdout and "max-running-requests" in shown.stdout, shown.stdout

    yaml_file.unlink()
    gone = cli("diff", "-c", path, "cfg1:30000")
    assert gone.returncode != 0 and "matches the profile" not in gone.stdout, gone.stdout
    assert "could not be read" in gone.stdout + gone.stderr, gone.stdout + gone.stderr
    assert "unknown" in gone.stdout + gone.stderr
    (watched,) = json.loads(cli("status", "-c", path, "--json").stdout)["hosts"]["cfg1"]["servers"]
    assert watched["drift"] is not False, watched  # unknown, never "same"


def test_capture_writes_the_config_files_keys_into_the_profile(
    fleet_factory, tmp_path, monkeypatch
):
    """A profile naming the file would start whatever the file says on the day of the relaunch:
    the captured profile holds its keys, in SGLang's merge order (the command line wins)."""
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    running = [*QWEN8B[:4], "--config", "{models}/qwen8b.yaml", "--max-running-requests", "48"]
    fleet = fleet_factory([_host("cfg2", running, files={"models/qwen8b.yaml": SAME_AS_PROFILE})])
    path = str(fleet.config_path)
    assert _up(path, "cfg2")["health"] == "ok"
    captured = cli("capture", "-c", path, "cfg2:30000", "--as", "from-file")
    assert captured.returncode == 0, captured.stdout + captured.stderr
    profile = yaml.safe_load(fleet.config_path.read_text())["profiles"]["from-file"]
    args = profile["args"]
    assert "--config" not in args and "--enable-metrics" in args, args
    assert args.index("--max-running-requests") < len(args) - 2  # the file's 64 first...
    assert args[-2:] == ["--max-running-requests", "48"], args  # ...the command line's 48 wins
    assert "qwen8b.yaml" in profile["description"], profile["description"]
