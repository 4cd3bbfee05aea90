"""Host helpers through the login shells operators really have: tcsh and fish.

The simulated host's SSH user (root) gets the shell in that host's own /etc/passwd (bound over it
in the host's mount namespace), so OpenSSH's sshd runs every command as `tcsh -c CMD` or
`fish -c CMD`, as on a real machine. The host (ct129) reaches its servers through
`pct exec 129 --`, so the exec_prefix path crosses the same shells.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import shutil

import pytest

from sglconsole import config
from sglconsole.remote.inspect import snapshot
from sglconsole.remote.ssh.connection import SshFleet
from sglconsole.sim.fleet.scenarios import demo_hosts
from tests.cli import cli

pytestmark = pytest.mark.slow

SHELLS = ["tcsh", "fish"]

ARGS = ["it's", 'say "hi"', "$HOME", "a!b", "back\\slash", "dbl\\\\slash", "*", "", "ünï ✓"]


@pytest.fixture(params=SHELLS)
def shell_fleet(request, fleet_factory):
    path = shutil.which(request.param)
    if path is None:
        pytest.fail(f"{request.param} is missing: install it (.ci/run and ./dev test do)")
    ct129 = dataclasses.replace(demo_hosts(startup_s=0.5)[0], login_shell=path)
    assert ct129.exec_prefix == ["pct", "exec", "129", "--"]
    return request.param, fleet_factory([ct129])


async def _on_host(cfg_path, work):
    cfg = config.load(cfg_path)
    fleet = SshFleet(cfg.hosts)
    try:
        return await work(fleet["ct129"], cfg.hosts["ct129"])
    finally:
        await fleet.close()


def test_helpers_and_actions_pass_through_the_login_shell(shell_fleet):
    shell, fleet = shell_fleet
    path = fleet.config_path

    async def look(ssh, host):
        # the login shell really is tcsh/fish: it is the parent of what it runs
        parent = await ssh.run(["sh", "-c", "cat /proc/$PPID/comm"], check=True)
        # a multi-line `python -c` with arguments every shell quotes differently
        code = "import json, sys\nprint(json.dumps(sys.argv[1:]))\n"
        echoed = await ssh.run([host.python, "-c", code, *ARGS], check=True)
        # the watcher helper (the process/log scanner), as `status` and every action run it
        snap = await snapshot(ssh, host.python)
        return parent.stdout.strip(), json.loads(echoed.stdout), snap

    parent, echoed, snap = asyncio.run(_on_host(path, look))
    assert parent == shell
    assert echoed == ARGS
    assert snap.server(30000) is not None and snap.server(30000).main.pid > 0

    # the long-lived watcher stream and nvidia-smi feed, through `status`
    status = cli("status", "-c", str(path), "--json")
    host = json.loads(status.stdout)["hosts"]["ct129"]
    assert host["reachable"] and host["error"] is None, host
    assert len(host["gpus"]) == 2
    assert host["servers"][0]["status"] not in ("DOWN", "UNKNOWN"), host["servers"][0]

    # an action's helpers (lock_agent, kill_agent) through the same shell
    result = cli("kill", "-c", str(path), "ct129:30000", "--yes")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "port 30000 free" in result.stdout

    async def gone(ssh, host):
        return (await snapshot(ssh, host.python)).server(30000)

    assert asyncio.run(_on_host(path, gone)) is None
