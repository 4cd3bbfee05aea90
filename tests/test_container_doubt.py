"""Which servers only a container engine can place: the real watcher agent, run as on a host
(`python3 -c SOURCE ARGS`, args `once`), names a server's parent and grandparent, and a server
under an engine's shim or init is in doubt until the engine answers — one under a plain shell
is not, so a one-shot status need not wait for that host's engines."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

import pytest

from sglconsole.core.containers import may_run_in_container
from sglconsole.core.processes import ProcInfo, analyse
from sglconsole.remote.agents import source


def _scan() -> list[ProcInfo]:
    done = subprocess.run(
        [sys.executable, "-c", source("watcher_agent"), json.dumps({"once": True, "apps": False})],
        capture_output=True,
        text=True,
        timeout=30,
        check=True,
    )
    for line in done.stdout.splitlines():
        message = json.loads(line)
        if message.get("t") == "procs":
            return [info for info in map(ProcInfo.from_json, message["procs"]) if info]
    raise AssertionError(f"no procs line: {done.stdout!r} {done.stderr!r}")


@pytest.mark.parametrize(
    ("parent", "in_doubt"),
    [("conmon", True), ("containerd-shim-runc-v2", True), ("launcher", False)],
)
def test_a_server_under_an_engines_shim_is_in_doubt(tmp_path, parent, in_doubt):
    server = tmp_path / "sglang" / "launch_server.py"  # a server to the watcher by its argv
    server.parent.mkdir()
    server.write_text("import time\ntime.sleep(60)\n")
    python = sys.executable
    shim = tmp_path / parent  # a script's process is named (comm) after its file
    # not the script's last command (dash would exec it): the script stays the server's parent
    shim.write_text(f'#!/bin/sh\n"{python}" "$@"\nexit $?\n')
    shim.chmod(0o755)
    process = subprocess.Popen([str(shim), str(server), "--port", "39123"], start_new_session=True)
    try:
        deadline = time.monotonic() + 10
        while True:
            found = [
                info for info in _scan() if info.main and info.argv[:2] == (python, str(server))
            ]
            if found or time.monotonic() > deadline:
                break
            time.sleep(0.1)
        assert found, "the watcher did not find the server"
        assert found[0].ancestors[0] == parent[:15], found[0].ancestors  # comm: 15 characters
        assert len(found[0].ancestors) == 2  # and the test's own process above it
        (view_server,) = [
            entry for entry in analyse(found, [], []).servers if entry.main.pid == found[0].pid
        ]
        assert may_run_in_container(view_server) is in_doubt
    finally:
        os.killpg(process.pid, signal.SIGKILL)  # the script and the server under it
        process.wait()
