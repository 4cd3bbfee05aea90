"""A long-running remote command read line by line (the watcher's and the journal's feeds), or in
the batches its lines arrive in (the GPU feed)."""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence

import asyncssh

from sglconsole.core.deadline import within
from sglconsole.errors import HostUnreachable
from sglconsole.remote.ssh.target import reason_of


class RemoteStream:
    """A long-running remote command read line by line (nvidia-smi -lms, the watcher)."""

    def __init__(self, host: str, argv: Sequence[str], process: asyncssh.SSHClientProcess):
        self.host = host
        self.argv = list(argv)
        self._process = process

    async def __aiter__(self) -> AsyncIterator[str]:
        try:
            async for line in self._process.stdout:
                if not line:  # EOF
                    break
                yield line.rstrip("\n")
        except (asyncssh.Error, OSError) as exc:  # the connection went away under the stream
            raise HostUnreachable(self.host, f"connection lost: {reason_of(exc)}") from None

    async def batches(self, size: int = 65536) -> AsyncIterator[list[str]]:
        """The lines in the batches they arrive in: one await for all the lines a command wrote
        at once (nvidia-smi's sample of every GPU), not one per line; a last line without its
        newline comes at EOF."""
        partial = ""
        try:
            while True:
                data = await self._process.stdout.read(size)
                if not data:  # EOF
                    break
                *lines, partial = (partial + data).split("\n")
                if lines:
                    yield lines
        except (asyncssh.Error, OSError) as exc:  # the connection went away under the stream
            raise HostUnreachable(self.host, f"connection lost: {reason_of(exc)}") from None
        if partial:
            yield [partial]

    def write(self, text: str) -> None:
        self._process.stdin.write(text)

    async def stderr_text(self, limit: int = 4096) -> str:
        try:
            return (await within(self._process.stderr.read(limit), 1.0)) or ""
        except (TimeoutError, asyncssh.Error, OSError):
            return ""

    @property
    def exit_status(self) -> int | None:
        return self._process.exit_status

    async def close(self) -> None:
        # EOF on stdin tells our own watcher to exit; closing the channel makes
        # anything else (nvidia-smi -lms) die on its next write.
        try:
            self._process.stdin.write_eof()
            if self._process.exit_status is None:
                self._process.terminate()  # where the server honours signal requests
        except (asyncssh.Error, OSError, BrokenPipeError):
            pass
        self._process.close()
        try:
            await within(self._process.wait_closed(), 2.0)
        except (TimeoutError, asyncssh.Error, OSError):
            pass
