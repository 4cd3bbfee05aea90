"""The watcher agent's heartbeat: every scan by default (the startup check reads it to judge a
process that never showed), once a minute for the feed (which reads none: each was a packet an
idle console decrypted). The real agent, as the host runs it: `python3 -c SOURCE ARGS`."""

from __future__ import annotations

import json
import subprocess
import threading
import time

from sglconsole.remote.agents import source
from sglconsole.remote.feeds.watcher import HEARTBEAT_S
from tests.agent_python import agent_python


def kinds_for(seconds: float, **args) -> list[str]:
    """The kinds of message the agent prints in SECONDS; then EOF on its stdin ends it."""
    python = agent_python()
    agent = subprocess.Popen(
        [python, "-c", source("watcher_agent"), json.dumps(args)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        env={"PATH": "/nonexistent"},  # no nvidia-smi: its compute-apps are an error, said once
    )
    kinds: list[str] = []
    reader = threading.Thread(
        target=lambda: kinds.extend(json.loads(line)["t"] for line in agent.stdout), daemon=True
    )
    reader.start()
    time.sleep(seconds)
    agent.stdin.close()
    assert agent.wait(timeout=10) == 0
    reader.join(timeout=5)
    return kinds


def test_a_heartbeat_each_scan_by_default_and_none_for_a_minute_for_the_feed():
    # each scan says "procs" when the host's SGLang processes changed (the suite's other workers
    # start and stop simulated servers on this machine), else "hb" — or, for the feed, nothing
    scans = {"interval": 0.2, "apps_interval": 600}
    default = kinds_for(1.5, **scans)
    assert default.count("hb") + default.count("procs") >= 5, default
    assert HEARTBEAT_S >= 60
    feed = kinds_for(1.5, **scans, heartbeat=HEARTBEAT_S)
    assert "procs" in feed and "hb" not in feed, feed
