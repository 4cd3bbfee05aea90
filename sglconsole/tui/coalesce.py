"""Batching fleet changes: the monitor may report hundreds a second, the UI redraws ~10 times."""

from __future__ import annotations

Key = tuple[str, int | None]
ROUTER = "router:"
"""A router's tree key is (ROUTER + name, None): host names cannot hold ':'."""


def router_key(name: str) -> Key:
    return (ROUTER + name, None)


def router_of(key: Key | None) -> str | None:
    """The router a tree key selects, or None (a host or a server)."""
    if key is None or key[1] is not None or not key[0].startswith(ROUTER):
        return None
    return key[0][len(ROUTER) :]


class Dirty:
    """Collects (host, port|None) from FleetState listeners until the UI takes them."""

    def __init__(self) -> None:
        self._keys: set[Key] = set()

    def mark(self, host: str, port: int | None) -> None:
        self._keys.add((host, port))

    def take(self) -> frozenset[Key]:
        keys, self._keys = frozenset(self._keys), set()
        return keys


def hosts_of(keys: frozenset[Key]) -> set[str]:
    return {host for host, _ in keys}
