"""The journal feed: a systemd unit with no log file is followed with `journalctl -fu UNIT`,
resumed by cursor after a reconnect (no line lost or repeated)."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Callable

from sglconsole.remote.feeds.host_link import HostLink
from sglconsole.state.fleet import ServerState
from sglconsole.state.ingest import take_line


class JournalFeed:
    def __init__(self, link: HostLink, on_activity: Callable[[int], None] = lambda port: None):
        self.link = link
        self.on_activity = on_activity
        """Called with the port of a server whose journal wrote a batch (prefill or decode) line."""
        self.cursors: dict[str, str] = {}  # systemd unit -> journal cursor: survives reconnects

    def servers(self) -> list[ServerState]:
        """The servers whose output only the journal has."""
        return [server for server in self.link.state.servers.values() if journal_only(server)]

    async def run(self, server: ServerState) -> None:
        link = self.link
        unit = server.config.systemd_unit
        while True:
            argv = ["journalctl", "-u", unit, "-f", "-o", "json", "--no-pager"]
            cursor = self.cursors.get(unit)
            argv += [f"--after-cursor={cursor}"] if cursor else ["-n", "200"]
            stream = await link.ssh.stream(argv)
            try:
                async for line in stream:
                    self._line(server, unit, line)
                if stream.exit_status is None and not await link.ssh.still_connected():
                    raise link.lost()
                detail = (await stream.stderr_text()).strip().splitlines()
            finally:
                await stream.close()
            server.log_state = (
                f"journalctl exited {stream.exit_status}: {detail[-1] if detail else ''}".strip()
            )
            link.publish(server.port)
            await asyncio.sleep(10)

    def _line(self, server: ServerState, unit: str, line: str) -> None:
        message, cursor = journal_entry(line)
        if cursor:
            self.cursors[unit] = cursor
        if message is None:
            return
        record = take_line(server, message, time.time())
        if record is not None and record.kind in ("decode", "prefill"):
            self.on_activity(server.port)
        self.link.publish(server.port)


def journal_only(server: ServerState) -> bool:
    """A systemd unit without a configured log: only the journal has its output."""
    return (
        server.config is not None
        and server.config.systemd_unit is not None
        and not server.config.log
    )


def journal_entry(line: str) -> tuple[str | None, str | None]:
    """(message, cursor) of one `journalctl -o json` line; MESSAGE may be a list of bytes."""
    try:
        entry = json.loads(line)
    except ValueError:
        return None, None
    if not isinstance(entry, dict):
        return None, None
    message = entry.get("MESSAGE")
    if isinstance(message, list):
        message = bytes(
            byte for byte in message if isinstance(byte, int) and 0 <= byte < 256
        ).decode("utf-8", "replace")
    cursor = entry.get("__CURSOR")
    return (message if isinstance(message, str) else None), (
        cursor if isinstance(cursor, str) else None
    )
