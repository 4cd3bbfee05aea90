"""The container agent's event stream across a restart of the engine's daemon: the stream ends
with the daemon, the agent says once that it polls, the engine is down, and once the daemon is
back the stream runs again (a real dockerd of the test's own: private socket, no bridge, no
iptables)."""

from __future__ import annotations

import json
import queue
import shutil
import subprocess
import tempfile
import threading
import time
from pathlib import Path

import pytest

from sglconsole.remote.agents import source
from sglconsole.sim.fleet import engines
from tests.agent_python import agent_python

QUIET_S = 5.0  # the agent's "quiet" and "retry": their own 60 s would be most of this test

pytestmark = pytest.mark.skipif(
    engines.unavailable(engines.DOCKER) is not None,
    reason=f"no real docker here: {engines.unavailable(engines.DOCKER)}",
)


def _dockerd(state: Path) -> subprocess.Popen:
    log = open(state / "dockerd.log", "ab")  # noqa: SIM115
    daemon = subprocess.Popen(
        [engines.DOCKERD, f"--host=unix://{state / 'docker.sock'}", f"--data-root={state / 'root'}",
         f"--exec-root={state / 'exec'}", f"--pidfile={state / 'dockerd.pid'}", "--bridge=none",
         "--iptables=false", "--ip6tables=false"],
        stdin=subprocess.DEVNULL, stdout=log, stderr=log, start_new_session=True,
    )  # fmt: skip
    log.close()
    cli = [engines.DOCKER_CLI, "--host", f"unix://{state / 'docker.sock'}", "version"]
    deadline = time.monotonic() + engines.START_S
    while subprocess.run(cli, capture_output=True, timeout=30).returncode != 0:
        assert daemon.poll() is None and time.monotonic() < deadline, (
            state / "dockerd.log"
        ).read_text(errors="replace")[-500:]
        time.sleep(0.2)
    return daemon


def _stop(daemon: subprocess.Popen) -> None:
    if daemon.poll() is None:
        daemon.terminate()  # our own child, by its Popen
        daemon.wait(30)


def test_a_restarted_daemon_ends_the_stream_and_it_runs_again():
    state = Path(tempfile.mkdtemp(prefix="sglev-"))  # short: a unix socket path
    (state / "bin").mkdir()
    wrapper = state / "bin" / "docker"
    wrapper.write_text(
        f'#!/bin/sh\nexec {engines.DOCKER_CLI} --host unix://{state / "docker.sock"} "$@"\n'
    )
    wrapper.chmod(0o755)
    daemon = _dockerd(state)
    python = agent_python()
    settings = json.dumps({"interval": 0.5, "quiet": QUIET_S, "retry": QUIET_S})
    agent = subprocess.Popen(
        [python, "-c", source("container_agent"), settings],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        env={"PATH": str(state / "bin"), "HOME": str(state)},
    )  # fmt: skip
    lines: queue.Queue = queue.Queue()
    threading.Thread(
        target=lambda: [lines.put(json.loads(x)) for x in agent.stdout], daemon=True
    ).start()
    said: list[dict] = []

    def until(predicate, timeout: float) -> dict:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                message = lines.get(timeout=0.5)
            except queue.Empty:
                continue
            if message["t"] != "hb":
                said.append(message)
            if predicate(message):
                return message
        raise AssertionError(f"not said in {timeout} s: {said}")

    def events(state_: str):
        return lambda m: m["t"] == "events" and m["engine"] == "docker" and m["state"] == state_

    try:
        until(events("stream"), 20)
        _stop(daemon)
        ended = until(events("poll"), 20)
        assert ended["detail"]  # why, in the engine's own words
        until(lambda m: m["t"] == "engine" and m["engine"] == "docker" and m["state"] == "down", 20)
        daemon = _dockerd(state)
        until(
            lambda m: m["t"] == "engine" and m["engine"] == "docker" and m["state"] == "ok",
            QUIET_S + 20,  # a daemon found down is asked again QUIET_S later
        )
        until(events("stream"), QUIET_S + 20)  # its stream is tried again QUIET_S after it ended
        assert [m["state"] for m in said if m["t"] == "events"] == ["stream", "poll", "stream"]
    finally:
        agent.stdin.close()
        assert agent.wait(timeout=30) == 0
        _stop(daemon)
        shutil.rmtree(state, ignore_errors=True)
