"""One action per server at a time, across consoles: an flock held on the host.

The lock is a file per port in the host's `lock_dir`; a remote process holds
it for the length of the action (see agents/lock_agent.py) and the kernel
drops it if that process, the connection or the console dies — so a crash
never leaves a stale lock behind.
"""

from __future__ import annotations

import getpass
import json
import socket
import time
from contextlib import asynccontextmanager

from sglconsole.actions.base import ActionContext, StageFailed
from sglconsole.remote.agents import source


def lock_path(ctx: ActionContext, host: str, port: int) -> str:
    return ctx.config.host(host).lock_file(port)


@asynccontextmanager
async def host_lock(ctx: ActionContext, host: str, port: int, action: str, wait: float = 0):
    if ctx.dry_run:
        yield
        return
    ssh = ctx.ssh[host]
    holder = {
        "user": _user(),
        "console": socket.gethostname(),
        "action": action,
        "since": time.strftime("%Y-%m-%d %H:%M:%S"),
    }
    request = {"path": lock_path(ctx, host, port), "holder": holder, "wait": wait}
    stream = await ssh.stream(
        [ctx.config.host(host).python, "-c", source("lock_agent"), json.dumps(request)]
    )
    try:
        answer = await _first_line(stream)
        if not answer.get("locked"):
            who = answer.get("holder") or {}
            raise StageFailed(
                f"{host}:{port} is locked by {who.get('user', '?')}@{who.get('console', '?')} "
                f"({who.get('action', 'an action')} since {who.get('since', '?')}); "
                "nothing was changed"
            )
        yield
    finally:
        await stream.close()


async def _first_line(stream) -> dict:
    async for line in stream:
        try:
            return json.loads(line)
        except ValueError:
            continue
    return {
        "locked": False,
        "holder": {
            "action": f"the lock helper failed: {(await stream.stderr_text()).strip()[-200:]}"
        },
    }


def _user() -> str:
    try:
        return getpass.getuser()
    except (KeyError, OSError):
        return "?"
