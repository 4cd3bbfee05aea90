"""The server's own account of a level: its decode lines between two log offsets.

Each SGLang decode line carries the gen throughput since the previous line.
A level's lines are read between the log's size before and after the level,
so no clock is shared between console and host. Of the lines that count
(core.decode_lines: busy, not the first after idle), only those at the level's
full batch do (warm-up requests and the final drain run smaller batches, and
lines are spaced in steps, not seconds), and the first of them is left out:
its interval began while the batch was still filling, which dilutes it. Their
speed (core.decode_lines.decode_speed) is what `--save-baseline` stores.
"""

from __future__ import annotations

from dataclasses import dataclass

from sglconsole.actions.launch import log_offset
from sglconsole.core.decode_lines import counted, decode_speed
from sglconsole.core.sglang_log import parse_line
from sglconsole.remote.ssh.connection import SshHost

READ_SNIPPET = (
    "import sys\n"
    "with open(sys.argv[1], 'rb') as fh:\n"
    "    fh.seek(int(sys.argv[2]))\n"
    "    sys.stdout.write(fh.read(int(sys.argv[3])).decode('utf-8', 'replace'))\n"
)
MAX_READ = 8 << 20


@dataclass(frozen=True)
class DecodeWindow:
    tok_s: float | None
    """SGLang's decode gen throughput at the level's full batch: the baseline's quantity."""
    accept_len: float | None
    lines: int
    running: int | None
    """#running-req of the full batch: what the server really ran (more than asked when others
    were busy)."""


def summarise(lines: list[str]) -> DecodeWindow:
    records = counted(
        record
        for record in map(parse_line, lines)
        if record is not None and record.kind == "decode"
    )
    records = [record for record in records if record.gen_throughput is not None]
    peak = max((record.running_req or 0 for record in records), default=None)
    steady = [record for record in records if record.running_req == peak][1:]
    speed = decode_speed(steady)
    return DecodeWindow(
        tok_s=speed.tok_s,
        accept_len=speed.accept_len,
        lines=speed.lines,
        running=peak if steady else None,
    )


async def position(ssh: SshHost, python: str, log: str | None) -> tuple[int | None, int | None]:
    """(inode, size) of the log now, or (None, None) when it cannot be read."""
    return await log_offset(ssh, python, log) if log else (None, None)


async def read_between(ssh: SshHost, python: str, log: str, start: tuple, end: tuple) -> list[str]:
    """The complete lines written between two positions of the same file (none if rotated)."""
    if None in (*start, *end) or start[0] != end[0] or end[1] <= start[1]:
        return []
    size = min(end[1] - start[1], MAX_READ)
    result = await ssh.run([python, "-c", READ_SNIPPET, log, str(start[1]), str(size)], timeout=30)
    return result.stdout.splitlines() if result.ok else []
