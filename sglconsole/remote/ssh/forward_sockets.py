"""The local ends of SSH port forwards: UNIX sockets in one private directory per console
process.

A loopback TCP port can be reached by every user of the operator's machine, and through it the
production servers behind the console's SSH connection (issue #16). A socket is reached only by
whoever may open its path: the directory is made 0700 by `tempfile.mkdtemp` (so a socket is never
reachable by another user, not even before its chmod), each socket is made 0600, and both go
away with the forward and the process.
"""

from __future__ import annotations

import atexit
import contextlib
import itertools
import os
import shutil
import socket
import stat
import tempfile
from typing import Any

SUN_PATH_MAX = 107
"""Bytes of a socket path Linux accepts (sun_path is 108 bytes with its NUL)."""
NAME_ROOM = 40
"""Room kept for the directory's and the socket's own names (`sglconsole-PID-XXXXXXXX/N-PORT`)."""
PREFIX = "sglconsole-"


def _parents() -> list[str]:
    """$XDG_RUNTIME_DIR (the user's own, on tmpfs) when usable, else the temporary directory."""
    runtime = os.environ.get("XDG_RUNTIME_DIR")
    candidates = [runtime] if runtime and _owned_by_me(runtime) else []
    return [*candidates, tempfile.gettempdir(), "/tmp"]


def _owned_by_me(path: str) -> bool:
    try:
        info = os.stat(path)
    except OSError:
        return False
    return stat.S_ISDIR(info.st_mode) and info.st_uid == os.getuid()


class SocketDir:
    """The process's private directory of forward sockets: made on first use, removed at exit
    (by the process that made it, not by a forked child)."""

    def __init__(self) -> None:
        self._path: str | None = None
        self._owner = 0
        self._names = itertools.count(1)

    def path(self) -> str:
        if self._path is None or self._owner != os.getpid() or not os.path.isdir(self._path):
            self._path, self._owner = self._make(), os.getpid()
            atexit.register(self.remove, self._path, self._owner)
        return self._path

    def new_socket(self, port: int) -> str:
        """A fresh path (never reused in this process: a stale one cannot be in the way)."""
        return os.path.join(self.path(), f"{next(self._names)}-{port}")

    @staticmethod
    def _make() -> str:
        problems = []
        for parent in _parents():
            if len(os.fsencode(parent)) + NAME_ROOM > SUN_PATH_MAX:
                problems.append(f"{parent}: too long a path for a UNIX socket")
                continue
            try:
                made = tempfile.mkdtemp(prefix=f"{PREFIX}{os.getpid()}-", dir=parent)
            except OSError as exc:
                problems.append(f"{parent}: {exc.strerror or exc}")
                continue
            sweep_leftovers(parent, keep=made)
            return made
        raise OSError(f"no directory for the forward sockets ({'; '.join(problems)})")

    @staticmethod
    def remove(path: str, owner: int) -> None:
        if os.getpid() == owner:
            shutil.rmtree(path, ignore_errors=True)


def sweep_leftovers(parent: str, keep: str) -> None:
    """Remove the socket directories that consoles killed before their exit hook left in PARENT:
    ours, of a process that is gone, with no socket in them that still answers (a live console
    in another PID namespace sharing /tmp keeps its own)."""
    try:
        names = os.listdir(parent)
    except OSError:
        return
    for name in names:
        path = os.path.join(parent, name)
        pid = name[len(PREFIX) :].partition("-")[0]
        if not name.startswith(PREFIX) or not pid.isdigit() or path == keep:
            continue
        if not _owned_by_me(path) or _alive(int(pid)) or _answers(path):
            continue
        shutil.rmtree(path, ignore_errors=True)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)  # signal 0: only asks whether the process exists
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _answers(folder: str) -> bool:
    try:
        names = os.listdir(folder)
    except OSError:
        return True  # cannot tell: leave it
    for name in names:
        with socket.socket(socket.AF_UNIX) as probe:
            probe.settimeout(0.2)
            try:
                probe.connect(os.path.join(folder, name))
            except OSError:
                continue
            return True
    return False


SOCKETS = SocketDir()


async def open_forward(conn: Any, remote_host: str, remote_port: int) -> tuple[Any, str]:
    """(asyncssh listener, socket path) of a new forward on the connection CONN."""
    path = SOCKETS.new_socket(remote_port)
    listener = await conn.forward_local_path_to_port(path, remote_host, remote_port)
    try:
        os.chmod(path, 0o600)  # only this user (and root) may connect, whatever the umask left
    except OSError:
        close_forward(listener, path)
        raise
    return listener, path


def close_forward(listener: Any, path: str | None) -> None:
    listener.close()
    if path:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(path)
