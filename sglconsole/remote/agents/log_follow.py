"""Following one log like ``tail -F``, by byte offset, for the watcher (watcher_agent.py).

Not run alone: ``source("watcher_agent")`` inlines this file where the watcher imports it, so the
host still gets one ``python3 -c`` program. Standard library only, Python 3.6+.
"""

import json
import os
import sys

MAX_LINE = 65536
CHUNK = 65536


def out(obj):
    sys.stdout.write(json.dumps(obj, separators=(",", ":")) + "\n")
    sys.stdout.flush()


class Follow:
    """tail -F of one file, by byte offset."""

    def __init__(self, path, ino, off, backlog):
        self.path = path
        self.fh = None
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
            fh = open(self.path, "rb")
        except (OSError, IOError) as exc:
            self.note("missing" if getattr(exc, "errno", 0) == 2 else "error", error=str(exc))
            return False
        st = os.fstat(fh.fileno())
        if self.ino == st.st_ino and self.off is not None and self.off <= st.st_size:
            start = self.off  # resume exactly where the console stopped reading
        elif self.ino is not None and self.ino != st.st_ino and self.off is not None:
            start = 0  # rotated while we were away: the new file from its start
            self.note("rotated")
        else:
            start = max(0, st.st_size - self.backlog)
            if start:
                fh.seek(start - 1)
                chunk = fh.read(self.backlog)
                cut = chunk.find(b"\n")
                start = start + cut if cut >= 0 else st.st_size
        fh.seek(start)
        self.fh, self.ino, self.off, self.partial = fh, st.st_ino, start, b""
        self.note("following", ino=st.st_ino, off=start)
        return True

    def poll(self):
        if self.fh is None and not self.open():
            return
        try:
            st = os.stat(self.path)
        except (OSError, IOError):
            st = None
        size = os.fstat(self.fh.fileno()).st_size
        if size < self.off + len(self.partial):
            self.note("truncated")
            self.fh.seek(0)
            self.off, self.partial = 0, b""
        self.drain()
        if st is None or st.st_ino != self.ino:
            self.drain()  # the last lines written before the rename
            self.fh.close()
            self.fh = None
            if st is None:
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
            data = self.fh.read(CHUNK)
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
