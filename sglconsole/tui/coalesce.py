"""Batching fleet changes: the monitor may report hundreds a second, the UI redraws ~10 times."""

from __future__ import annotations

Key = tuple[str, int | None]


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
