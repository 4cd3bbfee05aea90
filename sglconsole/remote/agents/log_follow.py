"""Following one log like ``tail -F``, by byte offset, for the watcher (watcher_agent.py).

Not run alone: ``source("watcher_agent")`` inlines this file where the watcher imports it, so the
host still gets one ``python3 -c`` program. Standard library only, Python 3.6+.
"""

import json
import os
import sys

MAX_LINE = 65536
CHUNK = 65536
# A lifetime's first line, then its HTTP server's (relaunches append to one log: sglconsole's
# core/log_owner.py reads the same markers)
LIFETIME_START = b"server_args=ServerArgs("
STARTED = b"Started server process ["
READY = b"The server is fired up and ready to roll"
HEAD_MAX = 262144  # start-up lines of the current lifetime sent ahead of the tail, at most
SCAN_MAX = 256 << 20  # how far back a lifetime's start is looked for (a day of decode lines ~20 MB)
SCAN_BLOCK = 1 << 20


def out(obj):
    sys.stdout.write(json.dumps(obj, separators=(",", ":")) + "\n")
    sys.stdout.flush()


class Follow:
    """tail -F of one file, by byte offset."""

    def __init__(self, path, ino, off, backlog):
        self.path = path
        self.handle = None
        self.ino = ino
        self.off = off
        self.backlog = backlog
        self.partial = b""
        self.state = None

    def note(self, state, **extra):
        if state != self.state:
            self.state = state
            extra.update({"t": "log_state", "path": self.path, "state": state})
            out(extra)

    def open(self):
        try:
            handle = open(self.path, "rb")
        except (OSError, IOError) as exc:
            self.note("missing" if getattr(exc, "errno", 0) == 2 else "error", error=str(exc))
            return False
        opened = os.fstat(handle.fileno())
        if self.ino == opened.st_ino and self.off is not None and self.off <= opened.st_size:
            start = self.off  # resume exactly where the console stopped reading
        elif self.ino is not None and self.ino != opened.st_ino and self.off is not None:
            start = 0  # rotated while we were away: the new file from its start
            self.note("rotated")
        else:
            start = max(0, opened.st_size - self.backlog)
            if start:
                handle.seek(start - 1)
                chunk = handle.read(self.backlog)
                cut = chunk.find(b"\n")
                start = start + cut if cut >= 0 else opened.st_size
            start = self.lifetime_head(handle, start, opened.st_ino)
        handle.seek(start)
        self.handle, self.ino, self.off, self.partial = handle, opened.st_ino, start, b""
        self.note("following", ino=opened.st_ino, off=start)
        return True

    def lifetime_head(self, handle, start, ino):
        """Where to start reading so that the current lifetime's start-up (its Started and ready
        lines) is read too: its start when that is near the tail; else its start-up lines are
        sent first, then the tail from `start` (a server wedged after hours of decode lines must
        not look like one that is still starting)."""
        life = last_lifetime(handle, start)
        if life is None or life >= start:
            return start
        if start - life <= HEAD_MAX:
            return life
        handle.seek(life)
        head = handle.read(HEAD_MAX)
        ready = head.find(READY)
        end = head.find(b"\n", ready) + 1 if ready >= 0 else head.rfind(b"\n") + 1
        lines = head[:end].decode("utf-8", "replace").split("\n")[:-1]
        out(
            {
                "t": "log",
                "path": self.path,
                "ino": ino,
                "off": start,
                "head": True,
                "skipped": start - life - end,
                "lines": [line[:MAX_LINE] for line in lines],
            }
        )
        return start

    def poll(self):
        if self.handle is None and not self.open():
            return
        try:
            on_disk = os.stat(self.path)
        except (OSError, IOError):
            on_disk = None
        size = os.fstat(self.handle.fileno()).st_size
        if size < self.off + len(self.partial):
            self.note("truncated")
            self.handle.seek(0)
            self.off, self.partial = 0, b""
        self.drain()
        if on_disk is None or on_disk.st_ino != self.ino:
            self.drain()  # the last lines written before the rename
            self.handle.close()
            self.handle = None
            if on_disk is None:
                self.note("missing")
            else:
                self.note("rotated")
                self.ino, self.off = None, None
                self.backlog_all()

    def backlog_all(self):
        self.backlog = 1 << 62  # a new file after rotation is read from its start
        self.open()
        self.backlog = 65536

    def drain(self):
        while True:
            data = self.handle.read(CHUNK)
            if not data:
                return
            data = self.partial + data
            cut = data.rfind(b"\n")
            if cut < 0:
                self.partial = data[-MAX_LINE:]
                return
            complete, self.partial = data[: cut + 1], data[cut + 1 :]
            lines = complete.decode("utf-8", "replace").split("\n")[:-1]
            self.off += len(complete)
            out(
                {
                    "t": "log",
                    "path": self.path,
                    "ino": self.ino,
                    "off": self.off,
                    "lines": [line[:MAX_LINE] for line in lines],
                }
            )


def last_lifetime(handle, end):
    """Offset of the line that starts the last server lifetime written before `end` (its
    server_args line; its Started line when the start is further back than SCAN_MAX), or None.
    Read backwards in blocks: a log of many lifetimes and days is never read whole."""
    pos, carry, started = end, b"", None
    while pos > 0 and end - pos < SCAN_MAX:
        step = min(SCAN_BLOCK, pos)
        pos -= step
        handle.seek(pos)
        block = handle.read(step) + carry
        found = block.rfind(LIFETIME_START)
        if started is None:
            started_at = block.rfind(STARTED)
            started = None if started_at < 0 else pos + block.rfind(b"\n", 0, started_at) + 1
        if found >= 0:
            return pos + block.rfind(b"\n", 0, found) + 1
        carry = block[: len(LIFETIME_START)]
    return started
