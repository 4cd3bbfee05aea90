"""Compiled matchers for the key layouts of Decode/Prefill lines: the parser's fast path.

Decode lines dominate a busy log and repeat one key layout ("shape"). The first
line of a layout goes through the generic parser (``sglang_log_batch``), which
then asks ``learn_shape`` to compile a matcher for that exact layout: one
anchored regex over the whole line and a generated builder that converts its
groups (values that repeat, like ``#running-req``, through a string->number
cache). Later lines of the layout take one ``re.match`` and no per-pair Python
loop. Whatever a matcher or builder rejects goes through the generic parser, so
both paths give the same record (the tests compare them, also under fuzzing).

Each layout is compiled once per process and kept (up to ``MAX_LAYOUTS``). A
fleet of mixed SGLang versions interleaves many layouts, so lookup must not
depend on recency: ``parse_line`` tries the ``ACTIVE_SHAPES`` most recently
used layouts, and on a miss ``match_known_layout`` finds the line's layout by
its key signature in a dict, one lookup whatever the number of layouts. (A
recency-ordered cache of 8 compiled layouts recompiled on nearly every line
once more than 8 layouts interleaved, and ran ~10x slower than plain parsing.)
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any, NamedTuple

from sglconsole.core.sglang_log.prefix import (
    TAGS_CACHE,
    TIMESTAMP_CACHE,
    Header,
    header_before,
    tags_miss,
    timestamp_miss,
)
from sglconsole.core.sglang_log.record import CLASS_SWITCH, FIELD_NAMES, Draft, LogRecord
from sglconsole.core.sglang_log.values import (
    BOOL,
    FLOAT_CACHE,
    FLOAT_PATTERN,
    HIGH_ENTROPY_FIELDS,
    INT,
    INT_CACHE,
    INT_PATTERN,
    KNOWN_KEYS,
    ShapeMismatch,
    float_miss,
    guess_value,
    int_miss,
    key_name,
)

KEYWORD = {"decode": "Decode batch", "prefill": "Prefill batch"}
MAX_LAYOUTS = 256  # compiled layouts kept; real fleets show a few dozen at most
MAX_SIGNATURES = 4096  # signature -> layout entries (a layout may show several spellings)
ACTIVE_SHAPES = 2  # layouts tried on each line before the signature lookup
# Loose on purpose (cheap for the regex engine): the builder checks the time
# and tag strings the first time it meets them (they are cached afterwards) and
# bails out to the generic parser when they are not the standard prefix format.
_STD_PREFIX_PATTERN = r"\[(.{19})([^\]]*)\] "


class Shape(NamedTuple):
    """The compiled matchers and builders of one key layout."""

    match_full: Callable[..., Any]  # the whole standard line, prefix included
    build_full: Callable[..., LogRecord]
    match_body: Callable[..., Any]  # from the first pair on, for other prefixes
    build_body: Callable[..., LogRecord]
    keys: tuple[str, ...]


_COMPILED: dict[tuple[str, tuple[str, ...]], Shape] = {}
_BY_SIGNATURE: dict[str, dict[tuple[str, ...], Shape]] = {"decode": {}, "prefill": {}}
_ACTIVE: dict[str, list[Shape]] = {"decode": [], "prefill": []}
#: (full matcher, full builder) of each active shape, the lists ``parse_line`` walks
ACTIVE_FULL: dict[str, list[tuple[Callable[..., Any], Callable[..., LogRecord]]]] = {
    "decode": [],
    "prefill": [],
}


def forget_shapes() -> None:
    """Drop every compiled layout (tests and benchmarks start cold with it)."""
    _COMPILED.clear()
    for kind, shapes in _ACTIVE.items():
        shapes.clear()
        ACTIVE_FULL[kind].clear()
        _BY_SIGNATURE[kind].clear()


def layout_signature(text: str, pos: int) -> tuple[str, ...]:
    """The keys of the pairs from ``pos`` on, read the cheap way (values may hold junk)."""
    return tuple([part.partition(": ")[0] for part in text[pos:].split(", ")])


def learn_shape(kind: str, pairs: list[tuple[str, str]], text: str, pos: int) -> None:
    """Compile (once) the layout of a line the generic parser just read, and make it active.

    ``pairs`` are the line's pairs, read from ``text[pos:]``; the layout is found
    later by the ``layout_signature`` of that text.
    """
    keys = tuple(key for key, _ in pairs)
    shape = _COMPILED.get((kind, keys))
    if shape is None:
        if len(_COMPILED) >= MAX_LAYOUTS or sum(key in KNOWN_KEYS for key in keys) < 2:
            return  # full, or not an SGLang stats line (no compiling for random text)
        percent = []
        for key, value in pairs:
            if "," in key or "," in value:
                return
            percent.append(key not in KNOWN_KEYS and value.endswith("%"))
        try:
            shape = compile_shape(kind, keys, tuple(percent))
        except Exception:  # pragma: no cover - defensive: never fail a parse
            return
        _COMPILED[(kind, keys)] = shape
    by_signature = _BY_SIGNATURE[kind]
    signature = layout_signature(text, pos)
    if signature not in by_signature and len(by_signature) < MAX_SIGNATURES:
        by_signature[signature] = shape
    active = _ACTIVE[kind]
    if not active or active[0] is not shape:
        _activate(kind, shape)


def _activate(kind: str, shape: Shape) -> None:
    """Put ``shape`` first in the layouts ``parse_line`` tries."""
    active = _ACTIVE[kind]
    if shape in active:
        active.remove(shape)
    active.insert(0, shape)
    del active[ACTIVE_SHAPES:]
    ACTIVE_FULL[kind][:] = [(each.match_full, each.build_full) for each in active]


def _pair_code(index: int, key: str, percent: bool) -> tuple[str, list[str], str | None]:
    """(regex of one ``key: value`` pair, builder lines for it, LogRecord field it sets)."""
    group = f"value{index}"
    literal = re.escape(key) + ": "
    known = KNOWN_KEYS.get(key)
    if known is None:
        if percent:  # stored as KEY_pct, like the generic parser does
            name = key_name(key) + "_pct"
            return literal + f"({FLOAT_PATTERN})%", [f"    extra[{name!r}] = float({group})"], None
        # '%' excluded: the generic parser would store those as KEY_pct
        return literal + "([^,%]*)", [f"    extra[{key_name(key)!r}] = _guess({group})"], None
    field_name, value_type = known
    if value_type is BOOL:
        line = f"    record.{field_name} = {group} == 'True'"
        return literal + "(True|False)", [line], field_name
    if field_name in HIGH_ENTROPY_FIELDS:
        pattern, convert = (INT_PATTERN, "int") if value_type is INT else (FLOAT_PATTERN, "float")
        line = f"    record.{field_name} = {convert}({group})"
        return literal + f"({pattern})", [line], field_name
    # a dict subscript is the cheapest hit; a miss (once per distinct value) raises
    cache, miss = ("_INTS", "_int_miss") if value_type is INT else ("_FLOATS", "_float_miss")
    lines = [
        "    try:",
        f"        record.{field_name} = {cache}[{group}]",
        "    except KeyError:",
        f"        record.{field_name} = {miss}({group})",
    ]
    return literal + r"([^,\s]*)", lines, field_name


def compile_shape(kind: str, keys: tuple[str, ...], percent: tuple[bool, ...]) -> Shape:
    """Matchers + builders for one key layout; they agree with the generic parser.

    Whatever a builder cannot convert exactly as the generic parser would
    raises (``ShapeMismatch`` or ``ValueError``), and the caller falls back to it.
    """
    patterns: list[str] = []
    body: list[str] = []
    assigned: set[str] = set()
    for index, key in enumerate(keys):
        pattern, lines, field_name = _pair_code(index, key, percent[index])
        patterns.append(pattern)
        body += lines
        if field_name is not None:
            assigned.add(field_name)
    body_pattern = ", ".join(patterns) + r"[,\s]*\Z"
    full_pattern = (
        _STD_PREFIX_PATTERN
        + re.escape(KEYWORD[kind])
        + r"(?: \[([0-9]{1,18})\])?[,.] "
        + body_pattern
    )
    groups = ", ".join(f"value{index}" for index in range(len(keys)))
    unset = [name for name in FIELD_NAMES[6:-1] if name not in assigned]
    tail = [f"    record.kind = {kind!r}", "    record.extra = extra"]
    if unset:
        tail.append("    " + " = ".join(f"record.{name}" for name in unset) + " = None")
    if CLASS_SWITCH:
        tail += ["    record.__class__ = _Record", "    return record"]
    else:  # pragma: no cover
        tail += ["    return _Record(*[getattr(record, name) for name in _FIELDS])"]
    source = [
        "def build_body(found, header, iteration):",
        f"    ({groups},) = found.groups()",
        "    record = _new(_Draft)",
        "    record.time, record.dp_rank, record.tp_rank, record.pp_rank, record.ep_rank,"
        " header_extra = header",
        "    extra = {} if header_extra is None else dict(header_extra)",
        "    if iteration is not None:",
        "        extra['iter'] = iteration",
        *body,
        *tail,
        "",
        "def build_full(found):",
        f"    timestamp, tags, iteration, {groups} = found.groups()",
        "    when = _timestamp_get(timestamp)",
        "    if when is None:",
        "        when = _timestamp_miss(timestamp)",
        "    ranks = _tags_get(tags)",
        "    if ranks is None:",
        "        ranks = _tags_miss(tags)",
        "    record = _new(_Draft)",
        "    record.time = when",
        "    record.dp_rank, record.tp_rank, record.pp_rank, record.ep_rank, header_extra = ranks",
        "    extra = {} if header_extra is None else dict(header_extra)",
        "    if iteration is not None:",
        "        extra['iter'] = int(iteration)",
        *body,
        *tail,
    ]
    namespace: dict[str, Any] = {
        "_new": object.__new__, "_Draft": Draft, "_Record": LogRecord, "_FIELDS": FIELD_NAMES,
        "_guess": guess_value, "_INTS": INT_CACHE, "_FLOATS": FLOAT_CACHE,
        "_int_miss": int_miss, "_float_miss": float_miss,
        "_timestamp_get": TIMESTAMP_CACHE.get, "_timestamp_miss": timestamp_miss,
        "_tags_get": TAGS_CACHE.get, "_tags_miss": tags_miss,
    }  # fmt: skip
    # generated from KNOWN_KEYS field names and repr()'d keys only
    exec("\n".join(source) + "\n", namespace)  # noqa: S102
    return Shape(
        re.compile(full_pattern).match,
        namespace["build_full"],
        re.compile(body_pattern).match,
        namespace["build_body"],
        keys,
    )


def body_start(text: str, pos: int) -> tuple[int, int | None, str | None]:
    """Skip the separator after ``Decode batch``/``Prefill batch``.

    Returns ``(position of the first pair, forward iteration or None,
    mixed-prefill text or None)``.
    """
    length = len(text)
    iteration = None
    mixed = None
    if text.startswith(" [", pos):
        close = text.find("]", pos + 2)
        number = text[pos + 2 : close] if close > 0 else ""
        if 0 < len(number) <= 18 and number.isdecimal() and number.isascii():
            iteration = int(number)
            pos = close + 1
    elif text.startswith("(", pos):
        close = text.find(")", pos)
        if close > 0:
            mixed = text[pos + 1 : close]
            pos = close + 1
    while pos < length and text[pos] in ".,: \t":
        pos += 1
    return pos, iteration, mixed


def match_known_layout(kind: str, text: str, keyword_at: int, keyword_len: int) -> LogRecord | None:
    """The record of a line whose layout was compiled before but is not active, or None."""
    by_signature = _BY_SIGNATURE[kind]
    if not by_signature:
        return None
    pos = keyword_at + keyword_len
    separator = text[pos : pos + 2]
    if separator == ", " or separator == ". ":
        pos += 2
        iteration = None
    else:
        pos, iteration, mixed = body_start(text, pos)
        if mixed is not None:
            return None
    shape = by_signature.get(layout_signature(text, pos))
    if shape is None:
        return None
    try:
        found = shape.match_full(text)
        if found is not None:
            record = shape.build_full(found)
        else:
            found = shape.match_body(text, pos)
            if found is None:
                return None
            header: Header = header_before(text, keyword_at)
            record = shape.build_body(found, header, iteration)
    except (ShapeMismatch, ValueError):
        return None
    _activate(kind, shape)
    return record
