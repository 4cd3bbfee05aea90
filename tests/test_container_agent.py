"""The container agent on a host without a usable engine: a CLI whose daemon does not run is
"down", a missing one "absent", each said once, and neither is an error of the host (real
Debian docker CLI, pointed at a socket nobody listens on)."""

from __future__ import annotations

import io
import json
import os
import pwd
import shutil
import signal
import socket
import subprocess
import tarfile
import tempfile
from pathlib import Path

import pytest

from sglconsole.core.containers import is_sglang, parse_inspect
from sglconsole.remote.agents import source
from tests.agent_python import agent_python

DOCKER = "/usr/bin/docker"


def _agent(tmp_path, socket: str, prefix: tuple[str, ...] = (), podman: bool = False) -> list[dict]:
    """The agent's messages until its third heartbeat, on a host whose docker is Debian's CLI
    pointed at `socket` (and, with `podman`, Debian's podman); then EOF on its stdin, which must
    end it."""
    wrapper = tmp_path / "bin" / "docker"
    wrapper.parent.mkdir(exist_ok=True)
    wrapper.write_text(f'#!/bin/sh\nexec {DOCKER} --host unix://{socket} "$@"\n')
    wrapper.chmod(0o755)
    if podman:
        (tmp_path / "bin" / "podman").symlink_to(PODMAN)
    tmp_path.chmod(0o755 if not podman else 0o777)
    python = agent_python()
    agent = subprocess.Popen(
        [*prefix, python, "-c", source("container_agent"), json.dumps({"interval": 0.2})],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={"PATH": str(wrapper.parent), "HOME": str(tmp_path)},
        cwd=tmp_path,  # the login's own: rootless podman chdirs back to it (a clone may be 0700)
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


PODMAN = "/usr/bin/podman"


@pytest.mark.skipif(
    not os.access(PODMAN, os.X_OK) or os.geteuid() != 0 or not shutil.which("setpriv"),
    reason="real podman, root and setpriv (to be a login of its own, rootless)",
)
def test_rootless_podman_is_found_by_the_logins_own_cli():
    """A login's rootless Podman (its own store, its own user namespace): the agent, run as that
    login, reports its container with the host PID of its process."""
    folder = Path(tempfile.mkdtemp(prefix="sglrootless-"))
    folder.chmod(0o777)
    conf = folder / "containers.conf"  # lowered ulimits: this sandbox forbids raising them
    conf.write_text('[containers]\ndefault_ulimits = ["nproc=4096:4096", "nofile=1024:1024"]\n')
    env = {
        "HOME": str(folder),
        "XDG_RUNTIME_DIR": str(folder / "run"),
        "CONTAINERS_CONF": str(conf),
        "PATH": "/usr/bin:/bin",
    }
    login = (shutil.which("setpriv"), "--reuid=nobody", "--regid=nogroup", "--clear-groups", "--")
    login += ("/usr/bin/env", *(f"{name}={value}" for name, value in env.items()))

    def podman(*args: str, stdin: bytes | None = None) -> str:
        done = subprocess.run(
            [*login, PODMAN, *args], input=stdin, capture_output=True, timeout=120, cwd=folder
        )
        assert done.returncode == 0, done.stderr.decode(errors="replace")[-800:]
        return done.stdout.decode()

    try:
        podman("import", "-", "rootless-sim:1", stdin=_empty_root())
        argv = ["/bin/sh", "-c", "sleep 300", "-m", "sglang.launch_server", "--port", "30555"]
        mounts = [
            arg
            for path in ("/usr", "/lib", "/lib64", "/bin")
            for arg in ("-v", f"{path}:{path}:ro")
        ]
        podman("run", "-d", "--name", "rootless-sglang", "--network", "host", *mounts,
               "localhost/rootless-sim:1", *argv)  # fmt: skip
        messages = _agent(folder, "/nonexistent.sock", login, podman=True)
        (listing,) = [m for m in messages if m["t"] == "containers" and m["engine"] == "podman"]
        (info,) = parse_inspect(listing["inspect"], "podman")
        assert info.name == "rootless-sglang" and info.running and is_sglang(info)
        assert info.port == 30555 and info.options.network == "host"
        assert os.stat(f"/proc/{info.pid}").st_uid == pwd.getpwnam("nobody").pw_uid
    finally:
        subprocess.run([*login, PODMAN, "rm", "-f", "-t", "0", "rootless-sglang"], timeout=120,
                       capture_output=True, cwd=folder)  # fmt: skip
        for pid in _processes_of(folder):  # its pause process: this test's, by its HOME
            os.kill(pid, signal.SIGKILL)
        shutil.rmtree(folder, ignore_errors=True)


def _empty_root() -> bytes:
    data = io.BytesIO()
    with tarfile.open(fileobj=data, mode="w") as archive:
        for name in ("usr", "lib", "lib64", "bin", "etc", "tmp", "proc", "sys", "dev"):
            entry = tarfile.TarInfo(name)
            entry.type, entry.mode = tarfile.DIRTYPE, 0o755
            archive.addfile(entry)
    return data.getvalue()


def _processes_of(home: Path) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        try:
            if entry.name.isdigit() and f"HOME={home}".encode() in (
                (entry / "environ").read_bytes().split(b"\0")
            ):
                found.append(int(entry.name))
        except OSError:
            continue
    return found
