"""The prefix of an SGLang log line: timestamp, rank tags and foreign prefixes in front.

Handles ``[YYYY-MM-DD HH:MM:SS(.fff) TP0 DP1 ...] ``, the old time-only
``[04:40:55 TP0] ``, a Ray prefix ``(SGLangEngine pid=123, ip=10.0.0.1) `` and
foreign prefixes before it (tqdm bars, python logging), or a bare
``2025-12-04 20:35:53 INFO ...`` logging prefix. Also strips terminal escapes and
in-place redraws (``clean_line``). Results are cached: a busy log repeats the
same timestamps and tags on many lines.
"""

from __future__ import annotations

import re
from datetime import datetime
from typing import Any

from sglconsole.core.sglang_log.values import ShapeMismatch

#: ``(time, dp_rank, tp_rank, pp_rank, ep_rank, header extra or None)``
Header = tuple[Any, ...]

_ANSI_RE = re.compile(r"\x1b(?:\[[0-?]*[ -/]*[@-~]|\][^\x07\x1b]*(?:\x07|\x1b\\)?|[@-Z\\-_])")
_HEADER_RE = re.compile(
    r"\[(?:([0-9]{4}-[0-9]{2}-[0-9]{2})[ T])?([0-9]{2}:[0-9]{2}:[0-9]{2})(?:[.,]([0-9]{1,6}))?"
    r"((?:[ \t]+[A-Za-z][A-Za-z_]*[0-9]+)*)[ \t]*\]"
)
STD_TIMESTAMP_RE = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2} [0-9]{2}:[0-9]{2}:[0-9]{2}")
_TAGS_RE = re.compile(r"(?:[ \t]+[A-Za-z][A-Za-z_]*[0-9]+)*")
_LEADING_TIMESTAMP_RE = re.compile(
    r"[ \t]*([0-9]{4}-[0-9]{2}-[0-9]{2})[ T]([0-9]{2}:[0-9]{2}:[0-9]{2})(?:[.,]([0-9]{1,6}))?"
)
_RAY_RE = re.compile(r"\((\w+) pid=([0-9]+)(?:,\s*ip=([0-9A-Za-z.:]+))?\)")
_TAG_RE = re.compile(r"([A-Za-z][A-Za-z_]*?)([0-9]+)")
_RANK_INDEX = {"DP": 0, "TP": 1, "PP": 2, "EP": 3}

CACHE_MAX = 4096
_TIME_CACHE: dict[tuple[str, str, str | None], datetime | None] = {}
TAGS_CACHE: dict[str, tuple[Any, ...]] = {}
_HEADER_CACHE: dict[str, Header] = {}
TIMESTAMP_CACHE: dict[str, datetime | None] = {}  # "YYYY-MM-DD HH:MM:SS" -> datetime
_MISSING: Any = object()
_fromisoformat = datetime.fromisoformat


def clean_line(text: str) -> str:
    """Drop terminal escapes, and of a line redrawn in place (tqdm) keep the last frame."""
    if "\x1b" in text:
        text = _ANSI_RE.sub("", text)
    if "\r" in text:
        text = text.rstrip("\r\n").rsplit("\r", 1)[-1]
    return text


def _to_datetime(date: str, clock: str, fraction: str | None) -> datetime | None:
    key = (date, clock, fraction)
    when = _TIME_CACHE.get(key, _MISSING)
    if when is not _MISSING:
        return when
    try:
        when = datetime(
            int(date[0:4]), int(date[5:7]), int(date[8:10]),
            int(clock[0:2]), int(clock[3:5]), int(clock[6:8]),
            int((fraction + "000000")[:6]) if fraction else 0,
        )  # fmt: skip
    except ValueError:
        when = None
    if len(_TIME_CACHE) >= CACHE_MAX:
        _TIME_CACHE.clear()
    _TIME_CACHE[key] = when
    return when


def rank_tags(tags: str) -> tuple[Any, ...]:
    """``' DP0 TP1 EP1'`` -> ``(dp, tp, pp, ep, {other_rank: n} or None)``."""
    ranks_and_other = TAGS_CACHE.get(tags)
    if ranks_and_other is None:
        ranks: list[Any] = [None, None, None, None, None]
        other: dict[str, int] = {}
        for tag in _TAG_RE.finditer(tags):
            name = tag.group(1).upper()
            index = _RANK_INDEX.get(name)
            if index is not None:
                ranks[index] = int(tag.group(2))
            else:
                other[name.lower() + "_rank"] = int(tag.group(2))
        ranks[4] = other or None
        ranks_and_other = tuple(ranks)
        if len(TAGS_CACHE) >= CACHE_MAX:
            TAGS_CACHE.clear()
        TAGS_CACHE[tags] = ranks_and_other
    return ranks_and_other


def parse_header(text: str, limit: int) -> tuple[Header, int]:
    """Find the log prefix in ``text[:limit]``.

    Returns ``((time, dp, tp, pp, ep, header_extra_or_None), message_start)``;
    ``message_start`` is 0 when no prefix was found.
    """
    header_extra: dict[str, Any] = {}
    when = None
    dp_rank = tp_rank = pp_rank = ep_rank = None
    start = 0
    bracket = _HEADER_RE.search(text, 0, limit)
    if bracket is not None:
        date, clock, fraction, tags = bracket.groups()
        if date:
            when = _to_datetime(date, clock, fraction)
        else:
            header_extra["time_of_day"] = clock
        if tags:
            dp_rank, tp_rank, pp_rank, ep_rank, other = rank_tags(tags)
            if other:
                header_extra.update(other)
        start = bracket.end()
        before = text[: bracket.start()]
    else:
        leading = _LEADING_TIMESTAMP_RE.match(text, 0, limit)
        if leading is not None:
            when = _to_datetime(leading.group(1), leading.group(2), leading.group(3))
            start = leading.end()
        before = text[:limit] if leading is None else ""
    if before and "pid=" in before:
        ray = _RAY_RE.search(before)
        if ray is not None:
            header_extra["pid"] = int(ray.group(2))
            if ray.group(3):
                header_extra["ip"] = ray.group(3)
    return (when, dp_rank, tp_rank, pp_rank, ep_rank, header_extra or None), start


def _std_header(prefix: str) -> Header | None:
    """The common ``[YYYY-MM-DD HH:MM:SS TAGS] `` prefix without a regex search, or None."""
    if len(prefix) < 22 or prefix[0] != "[" or prefix[-2:] != "] ":
        return None
    timestamp = prefix[1:20]
    tags = prefix[20:-2]
    if not STD_TIMESTAMP_RE.fullmatch(timestamp) or (tags and not _TAGS_RE.fullmatch(tags)):
        return None
    when = TIMESTAMP_CACHE.get(timestamp)
    if when is None:
        when = timestamp_miss(timestamp)
    dp_rank, tp_rank, pp_rank, ep_rank, other = rank_tags(tags)
    return (when, dp_rank, tp_rank, pp_rank, ep_rank, dict(other) if other else None)


def header_before(text: str, end: int) -> Header:
    """Cached header tuple for ``text[:end]`` (the part before ``Decode batch``)."""
    prefix = text[:end]
    header = _HEADER_CACHE.get(prefix)
    if header is None:
        header = _std_header(prefix)
        if header is None:
            header = parse_header(prefix, end)[0]
        if len(_HEADER_CACHE) >= CACHE_MAX:
            _HEADER_CACHE.clear()
        _HEADER_CACHE[prefix] = header
    return header


def timestamp_miss(timestamp: str) -> datetime | None:
    """Datetime of ``YYYY-MM-DD HH:MM:SS`` (None for an impossible date), cached.

    Raises ``ShapeMismatch`` for other text. The separator check plus
    fromisoformat (digits only, fixed widths) accept exactly what
    ``STD_TIMESTAMP_RE`` does, for a third of its cost.
    """
    if timestamp[4:17:3] != "-- ::":
        raise ShapeMismatch
    try:
        when: datetime | None = _fromisoformat(timestamp)
    except ValueError:
        if not STD_TIMESTAMP_RE.fullmatch(timestamp):
            raise ShapeMismatch from None
        when = None
    if len(TIMESTAMP_CACHE) >= CACHE_MAX:
        TIMESTAMP_CACHE.clear()
    TIMESTAMP_CACHE[timestamp] = when
    return when


def tags_miss(tags: str) -> tuple[Any, ...]:
    """``rank_tags`` for tags not cached yet; ``ShapeMismatch`` for text that is no tag list."""
    if tags and not _TAGS_RE.fullmatch(tags):
        raise ShapeMismatch
    return rank_tags(tags)
