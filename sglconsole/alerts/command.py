"""Running hosts.yaml's `alert_command` with the event as JSON on stdin (never on the UI's path)."""

from __future__ import annotations

import asyncio
import json

from sglconsole.core.deadline import within

TIMEOUT_S = 15.0


async def run_alert_command(argv: list[str], event: dict, timeout: float = TIMEOUT_S) -> str | None:
    """Run it to completion; return None when it succeeded, else one line saying what went wrong."""
    try:
        proc = await asyncio.create_subprocess_exec(
            *argv,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.DEVNULL,
            stderr=asyncio.subprocess.PIPE,
        )
    except OSError as exc:
        return f"alert_command {argv[0]}: {exc}"
    try:
        _, err = await within(proc.communicate(json.dumps(event).encode() + b"\n"), timeout)
    except TimeoutError:
        proc.kill()
        await proc.wait()
        return f"alert_command {argv[0]}: no exit after {timeout:g}s (killed)"
    except asyncio.CancelledError:  # the exporter stops: its command does not outlive it
        proc.kill()
        raise
    if proc.returncode != 0:
        last = (err or b"").decode(errors="replace").strip().splitlines()[-1:] or [""]
        return f"alert_command {argv[0]} exited {proc.returncode}: {last[0][:200]}"
    return None
