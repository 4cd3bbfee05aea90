"""The container agent on a host without a usable engine: a CLI whose daemon does not run is
"down", a missing one "absent", each said once, and neither is an error of the host (real
Debian docker CLI, pointed at a socket nobody listens on)."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from sglconsole.remote.agents import source

DOCKER = "/usr/bin/docker"


@pytest.mark.skipif(not os.access(DOCKER, os.X_OK), reason=f"no real docker CLI ({DOCKER})")
def test_a_docker_without_its_daemon_is_down_and_no_podman_is_absent(tmp_path):
    wrapper = tmp_path / "bin" / "docker"
    wrapper.parent.mkdir()
    wrapper.write_text(f'#!/bin/sh\nexec {DOCKER} --host unix://{tmp_path}/none.sock "$@"\n')
    wrapper.chmod(0o755)
    python = "/usr/bin/python3" if os.access("/usr/bin/python3", os.X_OK) else sys.executable
    agent = subprocess.Popen(
        [python, "-c", source("container_agent"), json.dumps({"interval": 0.2})],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={"PATH": str(wrapper.parent), "HOME": str(tmp_path)},
    )
    messages = []
    try:
        while len([m for m in messages if m["t"] == "hb"]) < 3:
            line = agent.stdout.readline()
            assert line, agent.stderr.read()
            messages.append(json.loads(line))
    finally:
        agent.stdin.close()  # EOF: the console went away, and so does the agent
        assert agent.wait(timeout=30) == 0
    engines = [m for m in messages if m["t"] == "engine"]
    assert [(m["engine"], m["state"]) for m in engines] == [
        ("docker", "down"),
        ("podman", "absent"),
    ]
    assert "docker daemon" in engines[0]["detail"].lower()
    assert not [m for m in messages if m["t"] == "containers"]
