"""`status` on a host whose SGLang takes seconds to judge drift (a real one imports torch, ~12 s):
the one-shot status waits for the verdict, says when it is not known yet, and the second run is
answered from the host-parser cache."""

from __future__ import annotations

import json
import subprocess
import time

import pytest

from sglconsole.sim.fleet.scenarios import QWEN8B
from sglconsole.sim.fleet.start import HostSpec, ServerSpec
from tests.cli import cli as run_cli

PARSER_DELAY_S = 4


def cli(*args: str) -> tuple[subprocess.CompletedProcess, float]:
    began = time.monotonic()
    done = run_cli(*args)
    return done, time.monotonic() - began


@pytest.fixture
def slow_parser_host(fleet_factory):
    """One server launched by hand with --decode-log-interval 20 (its profile says 40): DRIFT
    only."""
    drifted = [a if a != "40" else "20" for a in QWEN8B]
    fleet = fleet_factory(
        [HostSpec("drifty", servers=[ServerSpec(30000, "qwen8b-tp1", [0], running=drifted)])]
    )
    host = fleet.hosts["drifty"]
    [server_args] = (host.root / "env").rglob("sglang/srt/server_args.py")
    # each run of the host's parser leaves a line: whether the cache answered is counted, not timed
    # (a busy machine, several test workers on two cores, made a cached run take 4 s)
    runs = host.seen("logs/parser-runs")
    server_args.write_text(
        f"import time\nopen({runs!r}, 'a').write('ran\\n')\ntime.sleep({PARSER_DELAY_S})\n"
        + server_args.read_text()
    )
    return fleet


def parser_runs(fleet) -> int:
    """How many times the host's SGLang parser has run (a cache hit runs none)."""
    path = fleet.hosts["drifty"].root / "logs" / "parser-runs"
    return len(path.read_text().splitlines()) if path.exists() else 0


def test_status_waits_for_the_drift_verdict_and_caches_the_parser(slow_parser_host):
    config = str(slow_parser_host.config_path)
    first, took = cli("status", "-c", config, "--json")
    server = json.loads(first.stdout)["hosts"]["drifty"]["servers"][0]
    assert (server["status"], server["drift"], first.returncode) == ("DRIFT", True, 1), (
        first.stdout[-2000:]
    )
    assert "decode_log_interval" in server["reason"] or "decode-log-interval" in server["reason"]
    assert took > PARSER_DELAY_S and parser_runs(slow_parser_host) == 1

    second, _ = cli("status", "-c", config, "--json")
    again = json.loads(second.stdout)["hosts"]["drifty"]["servers"][0]
    assert (again["status"], again["drift"]) == ("DRIFT", True)
    assert parser_runs(slow_parser_host) == 1  # the verdict came from the cache


def test_status_says_when_drift_is_not_known_yet(slow_parser_host):
    done, _ = cli("status", "-c", str(slow_parser_host.config_path), "--drift-timeout", "0.5")
    assert "drift: not known yet for drifty:30000" in done.stdout, done.stdout
    as_json, _ = cli(
        "status", "-c", str(slow_parser_host.config_path), "--json", "--drift-timeout", "0.5"
    )
    out = json.loads(as_json.stdout)
    assert (
        out["drift_not_known"] == ["drifty:30000"]
        and out["hosts"]["drifty"]["servers"][0]["drift"] is None
    )


def test_a_restore_pays_for_the_host_parser_once_per_sglang_version(slow_parser_host):
    """A real host's preflight took 11.8 s importing SGLang: the second relaunch of the same
    launch on the same SGLang is answered from the cache (keyed by sglang/version.py, read
    without importing the package)."""
    config = str(slow_parser_host.config_path)
    first, took = cli("relaunch", "-c", config, "drifty:30000", "--dry-run")
    assert first.returncode == 0 and "arguments valid" in first.stdout, first.stdout[-2000:]
    assert took > PARSER_DELAY_S and parser_runs(slow_parser_host) == 1
    second, _ = cli("relaunch", "-c", config, "drifty:30000", "--dry-run")
    assert second.returncode == 0 and "arguments valid" in second.stdout
    assert parser_runs(slow_parser_host) == 1  # answered from the cache
