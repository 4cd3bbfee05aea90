"""The canary through the REAL SGLang router (the sglang-router wheel) in front of two simulated
servers, as its clients ask: one server answers in loops, and the router, which sends the
canary's questions to both in turn, is caught passing them on — in `status --watch --json` and in
the exporter's router series."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import time

import pytest

from bench.router_restore import routed_host, routers_yaml, start_router
from sglconsole import config
from sglconsole.remote.ssh.connection import SshFleet
from sglconsole.state.status_schema import StatusJson
from tests.e2e.test_exporter import Exporter, value, wait_metrics

pytestmark = pytest.mark.slow


def test_the_canary_through_the_router_catches_a_looping_worker(fleet_factory, tmp_path):
    routers = routers_yaml(2)
    routers["routers"]["front"]["canary"] = {"interval": 1, "timeout": 3}
    events = tmp_path / "events.jsonl"  # hosts.yaml's alert_command, run by the exporter below
    write = "import sys; open(sys.argv[1], 'a').write(sys.stdin.read())"
    routers["alert_command"] = [sys.executable, "-c", write, str(events)]
    # the second server loops from its first answer (SGLang's per-port setting)
    fleet = fleet_factory(
        [routed_host(2, ports={"30001": {"degrade_after": 0}})], extra_config=routers
    )

    async def router_up() -> None:
        ssh = SshFleet(config.load(fleet.config_path).hosts)
        try:
            await start_router(ssh, 2)
        finally:
            await ssh.close()

    asyncio.run(router_up())
    watch = subprocess.Popen(
        [sys.executable, "-m", "sglconsole", "-c", str(fleet.config_path), "status"]
        + ["--watch", "--json"],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    try:
        deadline = time.monotonic() + 60
        for line in watch.stdout:
            frame = json.loads(line)
            StatusJson.model_validate(frame)
            canary = frame["routers"]["front"]["canary"]
            if canary and canary["verdict"] == "DEGENERATE":
                break
            assert time.monotonic() < deadline, frame["routers"]
    finally:
        watch.kill()
        watch.wait()
    assert canary["via"] == "router front" and "canary DEGENERATE" in canary["finding"], canary
    verdicts = {answer["verdict"] for answer in canary["answers"]}
    assert "DEGENERATE" in verdicts, canary  # round robin: the looping worker answered some
    exporter = Exporter(fleet.config_path, tmp_path / "exporter.log")
    try:
        found = wait_metrics(
            exporter,
            lambda s: value(s, "sglconsole_router_canary_verdict", verdict="DEGENERATE") == 1,
            60,
            "the router's canary series",
        )
        # two failed runs in a row through the router are news of the router (alerts.canary)
        deadline = time.monotonic() + 30
        while not router_news(events):
            assert time.monotonic() < deadline, exporter.stderr()[-2000:]
            time.sleep(0.2)
    finally:
        exporter.stop()
    assert value(found, "sglconsole_router_canary_ok", router="front") == 0
    told = router_news(events)[0]
    assert (told["event"], told["canary"], told["host"], told["port"]) == (
        "problem",
        "DEGENERATE",
        "front",
        None,
    ), told
    assert "canary DEGENERATE" in told["reason"], told


def router_news(events) -> list[dict]:
    """The alert_command's events about the canary through router front."""
    if not events.exists():
        return []
    said = [json.loads(line) for line in events.read_text().splitlines()]
    return [event for event in said if event.get("router") == "front" and "canary" in event]
