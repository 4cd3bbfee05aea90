"""One ``nvidia-smi`` CSV value as a number, a string or None (pure, stdlib only).

Values that a GPU cannot report read ``[N/A]``, ``[Not Supported]``,
``[Unknown Error]``... (any bracketed word), sometimes ``N/A``: all -> None.
Without ``nounits`` values carry units: ``99 %``, ``21491 MiB``, ``695.96 W``.
"""

from __future__ import annotations

import re

__all__ = [
    "BadValue",
    "split_csv",
    "to_float",
    "to_int",
    "to_mask",
    "to_pstate",
    "to_str",
]

_NUMBER_RE = re.compile(r"^([-+]?\d+(?:\.\d+)?)\s*(%|MiB|MB|GiB|W|MHz|C|KB/s)?$")
_PSTATE_RE = re.compile(r"^P\d{1,2}$")


class BadValue(Exception):
    """A value that is neither a number nor a not-available marker: garbage."""


def split_csv(line: str) -> list[str]:
    return [column.strip() for column in line.split(",")]


def _not_available(value: str) -> bool:
    return (
        value == ""
        or (value.startswith("[") and value.endswith("]"))
        or value in ("N/A", "Not Supported", "Unknown Error", "Not Available")
    )


def to_float(value: str) -> float | None:
    if _not_available(value):
        return None
    match = _NUMBER_RE.match(value)
    if match is None:
        raise BadValue(value)
    return float(match.group(1))


def to_int(value: str) -> int | None:
    number = to_float(value)
    if number is None:
        return None
    if number != number or number in (float("inf"), float("-inf")):  # pragma: no cover
        raise BadValue(value)  # the regex forbids NaN and infinities; kept as a guard
    return int(round(number))


def to_str(value: str) -> str | None:
    return None if _not_available(value) else value


def to_mask(value: str) -> int | None:
    """A bitmask, printed in hex (``0x...``) or decimal."""
    if _not_available(value):
        return None
    try:
        if value[:2].lower() == "0x":
            return int(value[2:], 16)
        return int(value, 10)
    except ValueError:
        raise BadValue(value) from None


def to_pstate(value: str) -> str | None:
    if _not_available(value):
        return None
    if not _PSTATE_RE.match(value):
        raise BadValue(value)
    return value
