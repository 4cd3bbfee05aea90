"""The kernel log feed of one host: GPU Xid / NVRM and OOM-killer lines, read with the host's own
tools, into its signs (state.precursors).

`dmesg --follow` first (the kernel's ring buffer: needs root or CAP_SYSLOG where
kernel.dmesg_restrict=1, Ubuntu's and Debian's default); where the login may not, `journalctl -k`
(members of adm / systemd-journal may). Where neither answers, the host's signs say so in the
tools' own words, and the feed asks again every RETRY_S. A follow that restarts (a reconnect)
prints the buffer again: an event read before is one event (its time and text).
"""

from __future__ import annotations

import asyncio
import time

from sglconsole.core.kernel_log import parse_kernel_line
from sglconsole.remote.feeds.host_link import HostLink
from sglconsole.state.precursors import take_kernel_event

DMESG = ["dmesg", "--time-format", "iso", "--follow"]
JOURNAL = ["journalctl", "-k", "-o", "short-iso", "--no-pager"]
RETRY_S = 300.0  # permissions change rarely: a refused login is asked again every 5 min
# journalctl's words when this login sees no kernel messages (not a member of adm /
# systemd-journal), or when the host keeps no journal
JOURNAL_BLIND = ("not seeing messages from other users", "No journal files were", "insufficient")


class KernelFeed:
    def __init__(self, link: HostLink):
        self.link = link

    async def run(self) -> None:
        while True:
            said = await self._follow(DMESG, "dmesg")
            journal = await self._journal_readable()
            if journal is None:
                said = await self._follow([*JOURNAL, "-f", "-n", "1000"], "journalctl -k") or said
            else:
                self._unreadable(f"dmesg: {said or 'no output'}; journalctl -k: {journal}")
            await asyncio.sleep(RETRY_S)

    async def _follow(self, argv: list[str], name: str) -> str:
        """Follow one tool until it ends; return its last words (stderr) when it ends."""
        status, last = await self.link.follow(argv, lambda line, _stream: self._line(line, name))
        return last or f"exited {status}"

    async def _journal_readable(self) -> str | None:
        """None when `journalctl -k` shows this login the kernel's messages, else why not."""
        result = await self.link.ssh.run([*JOURNAL, "-n", "1"], timeout=30)
        words = f"{result.stderr}\n{result.stdout}".strip()
        if result.exit_status != 0 or any(blind in words for blind in JOURNAL_BLIND):
            lines = [line.strip() for line in words.splitlines() if line.strip()]
            return lines[0] if lines else f"exited {result.exit_status}"
        return None

    def _line(self, line: str, name: str) -> None:
        signs = self.link.state.signs
        if signs.kernel_source != name or signs.kernel_error is not None:
            signs.kernel_source, signs.kernel_error = name, None
            self.link.publish()
        event = parse_kernel_line(line)
        if event is not None and take_kernel_event(self.link.state, event, time.time()):
            self.link.publish()

    def _unreadable(self, why: str) -> None:
        signs = self.link.state.signs
        signs.kernel_source = None
        signs.kernel_error = f"kernel log not readable by this login ({why})"
        self.link.publish()
