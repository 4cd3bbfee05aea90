"""A fast `ctypes.util.find_library` for the native libraries asyncssh looks up at import.

asyncssh asks, on import, for nettle (UMAC) and liboqs (post-quantum key exchange). On Linux,
`ctypes.util.find_library` answers by running `ldconfig -p`, then `gcc` and `ld`, once per name
it does not find: ~10-40 ms a name of every `sglconsole` start, before its first connection.
Here those names are looked up in the dynamic linker's directories instead (LD_LIBRARY_PATH,
/etc/ld.so.conf, the system's), answering as ldconfig would: the library's soname
(`libnettle.so.8`), the highest version where several are installed, or None. Other names, and
other systems, still go to ctypes.
"""

from __future__ import annotations

import ctypes.util
import functools
import glob
import os
import re
import sys
import sysconfig
from collections.abc import Callable

# every name asyncssh's crypto modules pass to find_library (asyncssh.crypto.umac, .pq)
ASYNCSSH_NAMES = frozenset({"nettle", "libnettle", "libnettle-6", "oqs", "liboqs"})

_original: Callable[[str], str | None] = ctypes.util.find_library


def find(name: str) -> str | None:
    """The soname of lib{name} in the dynamic linker's directories, or None."""
    pattern = re.compile(rf"lib{re.escape(name)}\.so\.(\d+)")
    best: tuple[int, str] | None = None
    for entry in _entries():
        found = pattern.fullmatch(entry)
        if found and (best is None or int(found[1]) > best[0]):
            best = (int(found[1]), entry)
    return best[1] if best else None


@functools.cache
def _entries() -> tuple[str, ...]:
    """The names in every directory the dynamic linker searches, read once."""
    names: list[str] = []
    for directory in _directories():
        try:
            names += os.listdir(directory)
        except OSError:
            continue
    return tuple(names)


def _find_library(name: str) -> str | None:
    return find(name) if name in ASYNCSSH_NAMES else _original(name)


def install() -> None:
    """asyncssh's look-ups answered by `find` (before asyncssh is imported; Linux only)."""
    if sys.platform.startswith("linux") and "asyncssh" not in sys.modules:
        ctypes.util.find_library = _find_library


def _directories() -> list[str]:
    dirs = [path for path in os.environ.get("LD_LIBRARY_PATH", "").split(":") if path]
    dirs += _ld_so_conf("/etc/ld.so.conf", set())
    multiarch = sysconfig.get_config_var("MULTIARCH") or ""
    for prefix in ("/lib", "/usr/lib", "/usr/local/lib"):
        if multiarch:
            dirs.append(f"{prefix}/{multiarch}")
        dirs += [prefix + "64", prefix]
    return list(dict.fromkeys(dirs))


def _ld_so_conf(path: str, seen: set[str]) -> list[str]:
    if path in seen:
        return []
    seen.add(path)
    try:
        with open(path) as file:
            lines = file.read().splitlines()
    except OSError:
        return []
    dirs: list[str] = []
    for line in lines:
        line = line.split("#", 1)[0].strip()
        if line.startswith("include "):
            for included in sorted(glob.glob(line.split(None, 1)[1].strip())):
                dirs += _ld_so_conf(included, seen)
        elif line:
            dirs.append(line)
    return dirs
