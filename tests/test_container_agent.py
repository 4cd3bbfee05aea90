"""The container agent on a host without a usable engine: a CLI whose daemon does not run is
"down", a missing one "absent", each said once, and neither is an error of the host (real
Debian docker CLI, pointed at a socket nobody listens on)."""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from sglconsole.remote.agents import source

DOCKER = "/usr/bin/docker"


def _agent(tmp_path, socket: str, prefix: tuple[str, ...] = ()) -> list[dict]:
    """The agent's messages until its third heartbeat, on a host whose only engine is Debian's
    docker CLI pointed at `socket`; then EOF on its stdin, which must end it."""
    wrapper = tmp_path / "bin" / "docker"
    wrapper.parent.mkdir(exist_ok=True)
    wrapper.write_text(f'#!/bin/sh\nexec {DOCKER} --host unix://{socket} "$@"\n')
    wrapper.chmod(0o755)
    tmp_path.chmod(0o755)
    python = "/usr/bin/python3" if os.access("/usr/bin/python3", os.X_OK) else sys.executable
    agent = subprocess.Popen(
        [*prefix, python, "-c", source("container_agent"), json.dumps({"interval": 0.2})],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={"PATH": str(wrapper.parent), "HOME": str(tmp_path)},
    )
    messages: list[dict] = []
    try:
        while len([m for m in messages if m["t"] == "hb"]) < 3:
            line = agent.stdout.readline()
            assert line, agent.stderr.read()
            messages.append(json.loads(line))
    finally:
        agent.stdin.close()  # EOF: the console went away, and so does the agent
        assert agent.wait(timeout=30) == 0
    return messages


@pytest.mark.skipif(not os.access(DOCKER, os.X_OK), reason=f"no real docker CLI ({DOCKER})")
def test_a_docker_without_its_daemon_is_down_and_no_podman_is_absent(tmp_path):
    messages = _agent(tmp_path, f"{tmp_path}/none.sock")
    engines = [m for m in messages if m["t"] == "engine"]
    assert [(m["engine"], m["state"]) for m in engines] == [
        ("docker", "down"),
        ("podman", "absent"),
    ]
    assert "docker daemon" in engines[0]["detail"].lower()
    assert not [m for m in messages if m["t"] == "containers"]


@pytest.mark.skipif(
    not os.access(DOCKER, os.X_OK) or os.geteuid() != 0 or not shutil.which("setpriv"),
    reason="a real docker CLI, root and setpriv (to be a login the socket refuses)",
)
def test_a_docker_socket_this_login_may_not_use_is_denied():
    # a folder `nobody` may enter (pytest's tmp_path is root's alone)
    with tempfile.TemporaryDirectory(prefix="sglagent-") as folder:
        where = Path(folder)
        path = where / "docker.sock"
        with socket.socket(socket.AF_UNIX) as listening:  # root's, 0600: as a daemon's is
            listening.bind(str(path))
            listening.listen()
            path.chmod(0o600)
            setpriv = shutil.which("setpriv")
            nobody = (setpriv, "--reuid=nobody", "--regid=nogroup", "--clear-groups", "--")
            messages = _agent(where, str(path), nobody)
    (docker,) = [m for m in messages if m["t"] == "engine" and m["engine"] == "docker"]
    assert docker["state"] == "denied" and "permission denied" in docker["detail"]
