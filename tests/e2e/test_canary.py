"""Healthy but wrong (issue 27), driven on the simulator over real sshd: a server whose /health
says 200 while it answers nothing, answers that decay into loops, a request that hangs with 0
running and 0 queued, a greedy answer that changes, and SGLang's own warning lines. Each test puts
the simulated server in the state (its host settings, read live); the console's canary, asked by
`status --watch --json`, must catch it. None sets the console's state."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from collections.abc import Callable, Iterator

import pytest

from sglconsole.sim.fleet.scenarios import QWEN8B, demo_profiles
from sglconsole.sim.fleet.start import HostSpec, ServerSpec
from sglconsole.state.status_schema import StatusJson
from tests.e2e.test_actions import state_dir  # noqa: F401 (a fixture)
from tests.e2e.test_real_stalls import set_host

SERVE = [*QWEN8B, "--port", "30000"]
CANARY = {"interval": 1, "timeout": 3}  # a run a second, a silent answer judged in 3 s


def h200(**sglang) -> HostSpec:
    return HostSpec(
        name="h200",
        sglang_version="0.5.23",
        sglang={"startup_s": 0.5, **sglang},
        servers=[ServerSpec(30000, "qwen8b-tp1", [0], running=SERVE)],
    )


def profiles() -> dict:
    found = demo_profiles()
    found["qwen8b-tp1"] = {**found["qwen8b-tp1"], "canary": CANARY}
    return found


class Watch:
    """`status --watch --json`: one frame per second, the server's record of each."""

    def __init__(self, fleet):
        self.process = subprocess.Popen(
            [sys.executable, "-m", "sglconsole", "-c", str(fleet.config_path), "status"]
            + ["--watch", "--json"],
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
        )
        self.frames: Iterator[str] = iter(self.process.stdout)

    def server(self) -> dict:
        frame = json.loads(next(self.frames))
        StatusJson.model_validate(frame)  # `status --json`'s published shape (extra keys fail)
        return frame["hosts"]["h200"]["servers"][0]

    def until(self, check: Callable[[dict], bool], timeout: float, what: str) -> dict:
        deadline = time.monotonic() + timeout
        while not check(server := self.server()):
            assert time.monotonic() < deadline, f"{what}: {json.dumps(server)[:1500]}"
        return server

    def close(self) -> None:
        self.process.kill()
        self.process.wait()


@pytest.fixture
def watch_of():
    started: list[Watch] = []

    def make(fleet) -> Watch:
        started.append(Watch(fleet))
        return started[-1]

    yield make
    for watch in started:
        watch.close()


def verdict(server: dict) -> str | None:
    return (server.get("canary") or {}).get("verdict")


def passing(server: dict) -> bool:
    return (server.get("canary") or {}).get("ok") is True


@pytest.mark.usefixtures("state_dir")
def test_answers_that_decay_into_loops_are_degenerate(fleet_factory, watch_of):
    # #23020 / #29157: fine at first, gibberish after ~150 requests (here: after two runs' 6)
    fleet = fleet_factory([h200(degrade_after=6)], profiles())
    watch = watch_of(fleet)
    server = watch.until(lambda s: verdict(s) == "DEGENERATE", 30, "the loop is caught")
    canary = server["canary"]
    assert canary["ok"] is False and "DEGENERATE" in canary["finding"], canary
    assert canary["history"].startswith("✓") and canary["history"].endswith("✗"), canary
    looped = canary["answers"][0]
    assert looped["expected"] == "4" and "2 + 2 = 2" in looped["answer"], looped
    assert server["health"] == "ok", server  # /health never noticed
    # two failed runs in a row: the server's status says it, not UP (healthy but wrong)
    server = watch.until(lambda s: s["status"] == "DEGENERATE", 30, "the status turns")
    assert "canary's answers loop" in server["reason"], server


@pytest.mark.usefixtures("state_dir")
def test_a_server_that_stops_answering_while_health_says_200(fleet_factory, watch_of):
    # sglang#22779: /health 200 while it silently stopped serving after ~100 requests (here: 3)
    fleet = fleet_factory([h200(stop_serving_after=3)], profiles())
    watch = watch_of(fleet)
    server = watch.until(lambda s: verdict(s) == "TIMEOUT", 60, "the silence is caught")
    canary = server["canary"]
    assert "no answer while /health says 200" in canary["finding"], canary
    assert canary["history"].startswith("✓"), canary  # its first 3 requests were answered
    assert server["health"] == "ok", server
    server = watch.until(lambda s: s["status"] == "STALLED", 30, "the status turns")
    assert "no answer while /health says 200" in server["reason"], server


@pytest.mark.usefixtures("state_dir")
def test_a_request_that_hangs_with_nothing_running_or_queued(fleet_factory, watch_of):
    # #33858: a request hangs forever while the server says 0 running and 0 queued
    fleet = fleet_factory([h200()], profiles())
    watch = watch_of(fleet)
    watch.until(passing, 60, "a healthy server's canary passes")
    set_host(fleet, hang_requests=True)
    server = watch.until(lambda s: verdict(s) == "TIMEOUT", 30, "the hang is caught")
    canary = server["canary"]
    assert "no answer in 3 s" in canary["finding"], canary
    assert "0 running, 0 queued" in canary["finding"], canary
    # and the server's own load says so (a reading taken while an earlier run's request was in
    # the scheduler may still be current for a poll)
    idle = watch.until(lambda s: (s["running_req"], s["queue_req"]) == (0, 0), 20, "0 and 0")
    assert verdict(idle) == "TIMEOUT", idle
    set_host(fleet, hang_requests=False)
    watch.until(passing, 30, "it passes again once requests are served")


@pytest.mark.usefixtures("state_dir")
def test_a_greedy_answer_that_changes_is_a_finding(fleet_factory, watch_of):
    # #22819: different answers at temperature 0 (each still right: no WRONG, a change)
    fleet = fleet_factory([h200()], profiles())
    watch = watch_of(fleet)
    first = watch.until(passing, 60, "a healthy server's canary passes")
    said = [f"was {answer['answer']!r}" for answer in first["canary"]["answers"]]
    set_host(fleet, nondeterministic=True)
    server = watch.until(
        lambda s: (s.get("canary") or {}).get("ok") is False, 30, "the change is caught"
    )
    canary = server["canary"]
    assert canary["verdict"] == "OK", canary  # right answers, in other words
    assert "answer changed at temperature 0" in canary["finding"], canary
    assert any(before in canary["finding"] for before in said), canary


@pytest.mark.usefixtures("state_dir")
def test_sglang_own_warnings_are_counted_per_lifetime(fleet_factory, watch_of):
    # SGLang's KV canary (--kv-canary log) and its sampler's NaN check say it before users do
    fleet = fleet_factory([h200()], profiles())
    watch = watch_of(fleet)
    quiet = watch.until(passing, 60, "a healthy server's canary passes")
    assert quiet["sglang_signals"]["kv_canary"]["count"] == 0, quiet
    set_host(fleet, kv_canary_violations=3, nan_logits=True)
    server = watch.until(
        lambda s: (
            s["sglang_signals"]["kv_canary"]["count"] >= 2
            and s["sglang_signals"]["nan_logits"]["count"] >= 1
        ),
        30,
        "the warnings are counted",
    )
    signals = server["sglang_signals"]
    assert signals["kv_canary_violations"] == 3, signals
    assert signals["nan_logits"]["last_at"] > time.time() - 30, signals


def skipped(server: dict) -> str:
    return ((server.get("canary") or {}).get("skipped") or {}).get("reason") or ""


@pytest.mark.usefixtures("state_dir")
def test_no_canary_while_the_server_is_saturated(fleet_factory, watch_of):
    # more requests in flight than --max-running-requests: a canary would only queue behind them
    serve = [*QWEN8B, "--port", "30000"]
    serve[serve.index("--max-running-requests") + 1] = "2"
    busy = h200(load={"concurrency": 4, "max_tokens": 100000})
    busy.servers = [ServerSpec(30000, "qwen8b-tp1", [0], running=serve)]
    fleet = fleet_factory([busy], profiles())
    watch = watch_of(fleet)
    server = watch.until(lambda s: "saturated" in skipped(s), 60, "the run is skipped")
    assert "--max-running-requests 2" in skipped(server), server["canary"]
    assert server["canary"]["verdict"] is None and server["canary"]["answers"] == [], server


@pytest.mark.usefixtures("state_dir")
def test_no_canary_while_an_action_holds_the_server(fleet_factory, watch_of):
    # another console's relaunch (here: the CLI) holds the server's lock on the host
    fleet = fleet_factory([h200()], profiles())
    watch = watch_of(fleet)
    watch.until(passing, 60, "a healthy server's canary passes")
    relaunch = subprocess.Popen(
        [sys.executable, "-m", "sglconsole", "-c", str(fleet.config_path)]
        + ["relaunch", "h200:30000", "--yes"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        server = watch.until(lambda s: "an action runs on it" in skipped(s), 60, "skipped")
        assert "relaunch by" in skipped(server), server["canary"]
    finally:
        assert relaunch.wait(timeout=180) == 0
    watch.until(passing, 60, "the relaunched server's canary passes")
