"""A line of `docker logs --timestamps` / `podman logs --timestamps` (pure).

Each line starts with its RFC 3339 time: docker writes `2026-12-06T02:10:54.1Z` (trailing zeros of
the nanoseconds dropped), podman `2026-12-06T02:10:54.123456789+00:00`; so two stamps compare as
numbers, never as text ("54.1Z" sorts after "54.12Z").
"""

from __future__ import annotations

from datetime import UTC, datetime


def split_stamp(text: str) -> tuple[tuple[int, int] | None, str]:
    """((epoch seconds, nanoseconds) or None when the line has no stamp, the line itself)."""
    head, sep, rest = text.partition(" ")
    stamp = parse_stamp(head)
    return (stamp, rest) if stamp is not None and sep else (None, text)


def parse_stamp(text: str) -> tuple[int, int] | None:
    if len(text) < 20 or text[10:11] != "T":
        return None
    whole, zone = text[:19], text[19:]
    nanos = 0
    if zone.startswith("."):
        digits = len(zone) - len(zone[1:].lstrip("0123456789")) - 1
        fraction, zone = zone[1 : 1 + digits], zone[1 + digits :]
        nanos = int(fraction[:9].ljust(9, "0")) if fraction else 0
    if zone in ("Z", "z"):
        zone = "+00:00"
    try:
        moment = datetime.fromisoformat(whole + zone)
    except ValueError:
        return None
    if moment.tzinfo is None:
        return None
    return int(moment.timestamp()), nanos


def stamp_seconds(stamp: tuple[int, int]) -> float:
    """A stamp as seconds since the epoch, to compare with a process's start."""
    seconds, nanos = stamp
    return seconds + nanos / 1e9


def format_stamp(stamp: tuple[int, int]) -> str:
    """A stamp as `--since` takes it (RFC 3339, UTC, nanoseconds)."""
    seconds, nanos = stamp
    moment = datetime.fromtimestamp(seconds, UTC)
    return moment.strftime("%Y-%m-%dT%H:%M:%S") + f".{nanos:09d}Z"
