"""Parse SGLang server log lines into typed records.

Pure: standard library only, no I/O. ``parse_line`` turns one line of an SGLang
server log into a :class:`LogRecord` (or ``None`` for lines that carry nothing
the console uses) and never raises.

Formats handled, as seen in real logs from SGLang 0.1 to 0.5.x:

* the prefix ``[YYYY-MM-DD HH:MM:SS TP0] `` with any number of rank tags
  (``DP1``, ``TP3``, ``PP0``, ``EP7``, in any order), optional fractional
  seconds, the old time-only ``[04:40:55 TP0] `` prefix, a Ray prefix
  ``(SGLangEngine pid=123, ip=10.0.0.1) `` and foreign prefixes in front of it
  (tqdm bars, ``2025-03-07 23:50:27,531 - __main__ - INFO - ``), or a bare
  ``2025-12-04 20:35:53 INFO ... `` logging prefix;
* ``Decode batch`` / ``Prefill batch`` lines, read as ``key: value`` pairs after
  ``Decode batch.`` (old), ``Decode batch,`` or ``Decode batch [123],``, so
  fields that come and go between versions (accept len, mamba/swa usage,
  disaggregation queues, ``cuda graph``/``npu graph``, MFU estimates ...) all
  parse; unknown keys land in ``extra`` under normalised snake_case names;
* the ready line, start-up milestones and error lines (see ``MILESTONES`` and
  ``ERROR_CLASSES``).

Units in ``extra``: memory in GB (``avail_mem``, ``mem_usage``, ``k_size``,
``available_gpu_mem`` ...), durations in seconds (``elapsed``), values printed
with a ``%`` sign get a ``_pct`` key suffix. Other ``extra`` keys: ``time_of_day``
(time-only prefixes), ``pid``/``ip`` (Ray prefix), ``iter`` (``Decode batch [N]``),
``<tag>_rank`` for rank tags other than DP/TP/PP/EP, ``exception_type``.

Speed: decode lines dominate a busy log, so they have a fast path. The first
line of each key layout ("shape") is parsed by the generic pair parser, which
then compiles a matcher for that exact layout: one anchored regex over the whole
line and a generated builder that converts its groups (values that repeat, like
``#running-req`` or ``accept len``, through a string->number cache). Later lines
of the same layout take one ``re.match`` and no per-pair Python loop; any line
the matcher or builder rejects goes through the generic parser, so both paths
give the same record (tests compare them, also under fuzzing).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field, fields
from datetime import datetime
from typing import Any

__all__ = [
    "ERROR_CLASSES",
    "KINDS",
    "MILESTONES",
    "LogRecord",
    "iter_records",
    "parse_line",
    "parse_time_prefix",
]

KINDS = ("decode", "prefill", "ready", "milestone", "error")

#: milestone names, in the order a healthy start-up logs them
MILESTONES = (
    "dist_init_begin",
    "dist_init_end",
    "weights_begin",
    "weights_loaded",
    "kv_cache",
    "mamba_cache",
    "memory_pool_end",
    "cuda_graph_begin",
    "cuda_graph_end",
    "max_total_num_tokens",
    "uvicorn_running",
)

#: error classes, most specific first
ERROR_CLASSES = (
    "cuda_oom",
    "not_enough_memory",
    "address_in_use",
    "unrecognized_arguments",
    "invalid_argument",
    "nccl",
    "watchdog",
    "health_check",
    "child_failed",
    "init_failed",
    "killed",
    "traceback",
    "exception",
    "error_log",
)


@dataclass(frozen=True, slots=True)
class LogRecord:
    """One parsed log line. Every field but ``kind`` may be ``None``."""

    kind: str  # "decode" | "prefill" | "ready" | "milestone" | "error"
    time: datetime | None = None
    dp_rank: int | None = None
    tp_rank: int | None = None
    pp_rank: int | None = None
    ep_rank: int | None = None
    running_req: int | None = None
    token: int | None = None
    token_usage: float | None = None
    mamba_usage: float | None = None
    swa_token_usage: float | None = None
    accept_len: float | None = None
    accept_rate: float | None = None
    cuda_graph: bool | None = None
    gen_throughput: float | None = None
    queue_req: int | None = None
    new_seq: int | None = None
    new_token: int | None = None
    cached_token: int | None = None
    input_throughput: float | None = None
    message: str | None = None
    milestone: str | None = None
    error: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        """JSON-able dict: every field present (``None`` allowed), time as ISO 8601."""
        out = {name: getattr(self, name) for name in _FIELD_NAMES}
        if self.time is not None:
            out["time"] = self.time.isoformat()
        out["extra"] = dict(self.extra) if self.extra else {}
        return out


_FIELD_NAMES = tuple(f.name for f in fields(LogRecord))
_SLOT = {name: i for i, name in enumerate(_FIELD_NAMES)}
_N_FIELDS = len(_FIELD_NAMES)

# --------------------------------------------------------------------------
# Fast construction of the frozen record.
#
# A frozen dataclass __init__ stores each of its 24 fields through
# object.__setattr__, which costs about as much as parsing the line. _Draft has
# the same slots and no frozen __setattr__: the builders fill a _Draft with
# plain attribute stores, then switch its class to LogRecord (same layout, so
# CPython allows it). The result is an ordinary, frozen LogRecord. If the switch
# ever fails (another interpreter), the builders call LogRecord(...) instead.


class _Draft:
    __slots__ = LogRecord.__slots__


def _probe_class_switch() -> bool:
    try:
        d = object.__new__(_Draft)
        for name in _FIELD_NAMES:
            setattr(d, name, None)
        d.kind = "decode"
        d.extra = {}
        d.__class__ = LogRecord
        return type(d) is LogRecord and d == LogRecord(kind="decode")
    except Exception:  # pragma: no cover - depends on the interpreter
        return False


_CLASS_SWITCH = _probe_class_switch()


def _gen_list_builder() -> Callable[[list[Any]], LogRecord]:
    """``build(values)``: a LogRecord from a list of all field values in order."""
    targets = ", ".join(f"o.{n}" for n in _FIELD_NAMES)
    if _CLASS_SWITCH:
        src = (
            "def build(v):\n"
            "    o = _new(_Draft)\n"
            f"    ({targets},) = v\n"
            "    o.__class__ = _Record\n"
            "    return o\n"
        )
    else:  # pragma: no cover
        src = "def build(v):\n    return _Record(*v)\n"
    ns: dict[str, Any] = {"_new": object.__new__, "_Draft": _Draft, "_Record": LogRecord}
    exec(src, ns)  # noqa: S102 - generated from the fixed field list above
    return ns["build"]


_build = _gen_list_builder()
_EMPTY = [None] * _N_FIELDS


def _record(kind: str, **values: Any) -> LogRecord:
    v = _EMPTY.copy()
    v[0] = kind
    for k, val in values.items():
        v[_SLOT[k]] = val
    if v[-1] is None:
        v[-1] = {}
    return _build(v)


# --------------------------------------------------------------------------
# Line prefix: [YYYY-MM-DD HH:MM:SS(.fff)? TAG0 TAG1 ...]

_ANSI_RE = re.compile(r"\x1b(?:\[[0-?]*[ -/]*[@-~]|\][^\x07\x1b]*(?:\x07|\x1b\\)?|[@-Z\\-_])")
_HDR_RE = re.compile(
    r"\[(?:([0-9]{4}-[0-9]{2}-[0-9]{2})[ T])?([0-9]{2}:[0-9]{2}:[0-9]{2})(?:[.,]([0-9]{1,6}))?"
    r"((?:[ \t]+[A-Za-z][A-Za-z_]*[0-9]+)*)[ \t]*\]"
)
_STD_TS_RE = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2} [0-9]{2}:[0-9]{2}:[0-9]{2}")
_TAGS_RE = re.compile(r"(?:[ \t]+[A-Za-z][A-Za-z_]*[0-9]+)*")
_LEAD_TS_RE = re.compile(
    r"[ \t]*([0-9]{4}-[0-9]{2}-[0-9]{2})[ T]([0-9]{2}:[0-9]{2}:[0-9]{2})(?:[.,]([0-9]{1,6}))?"
)
_RAY_RE = re.compile(r"\((\w+) pid=([0-9]+)(?:,\s*ip=([0-9A-Za-z.:]+))?\)")
_TAG_RE = re.compile(r"([A-Za-z][A-Za-z_]*?)([0-9]+)")
_RANK_FIELD = {"DP": 0, "TP": 1, "PP": 2, "EP": 3}

_CACHE_MAX = 4096
_TIME_CACHE: dict[tuple[str, str, str | None], datetime | None] = {}
_TAGS_CACHE: dict[str, tuple[Any, ...]] = {}
_HDR_CACHE: dict[str, tuple[Any, ...]] = {}
_TS_CACHE: dict[str, datetime | None] = {}  # "YYYY-MM-DD HH:MM:SS" -> datetime
_MISSING: Any = object()
_fromisoformat = datetime.fromisoformat


def _to_datetime(date: str, clock: str, frac: str | None) -> datetime | None:
    key = (date, clock, frac)
    dt = _TIME_CACHE.get(key, _MISSING)
    if dt is not _MISSING:
        return dt
    try:
        dt = datetime(
            int(date[0:4]), int(date[5:7]), int(date[8:10]),
            int(clock[0:2]), int(clock[3:5]), int(clock[6:8]),
            int((frac + "000000")[:6]) if frac else 0,
        )  # fmt: skip
    except ValueError:
        dt = None
    if len(_TIME_CACHE) >= _CACHE_MAX:
        _TIME_CACHE.clear()
    _TIME_CACHE[key] = dt
    return dt


def _tags(tags: str) -> tuple[Any, ...]:
    """``' DP0 TP1 EP1'`` -> ``(dp, tp, pp, ep, {other_rank: n} or None)``."""
    r = _TAGS_CACHE.get(tags)
    if r is None:
        ranks: list[Any] = [None, None, None, None, None]
        other: dict[str, int] = {}
        for tm in _TAG_RE.finditer(tags):
            name = tm.group(1).upper()
            idx = _RANK_FIELD.get(name)
            if idx is not None:
                ranks[idx] = int(tm.group(2))
            else:
                other[name.lower() + "_rank"] = int(tm.group(2))
        ranks[4] = other or None
        r = tuple(ranks)
        if len(_TAGS_CACHE) >= _CACHE_MAX:
            _TAGS_CACHE.clear()
        _TAGS_CACHE[tags] = r
    return r


def _parse_header(text: str, limit: int) -> tuple[tuple[Any, ...], int]:
    """Find the log prefix in ``text[:limit]``.

    Returns ``((time, dp, tp, pp, ep, header_extra_or_None), message_start)``;
    ``message_start`` is 0 when no prefix was found.
    """
    hx: dict[str, Any] = {}
    t = None
    dp = tp = pp = ep = None
    start = 0
    m = _HDR_RE.search(text, 0, limit)
    if m is not None:
        date, clock, frac, tags = m.groups()
        if date:
            t = _to_datetime(date, clock, frac)
        else:
            hx["time_of_day"] = clock
        if tags:
            dp, tp, pp, ep, other = _tags(tags)
            if other:
                hx.update(other)
        start = m.end()
        head = text[: m.start()]
    else:
        lm = _LEAD_TS_RE.match(text, 0, limit)
        if lm is not None:
            t = _to_datetime(lm.group(1), lm.group(2), lm.group(3))
            start = lm.end()
        head = text[:limit] if lm is None else ""
    if head and "pid=" in head:
        rm = _RAY_RE.search(head)
        if rm is not None:
            hx["pid"] = int(rm.group(2))
            if rm.group(3):
                hx["ip"] = rm.group(3)
    return (t, dp, tp, pp, ep, hx or None), start


def parse_time_prefix(text: str) -> datetime | None:
    """The timestamp of any SGLang-prefixed line (also lines ``parse_line`` drops)."""
    try:
        text = _clean(text)
        return _parse_header(text, len(text))[0][0]
    except Exception:
        return None


def _std_header(hdr: str) -> tuple[Any, ...] | None:
    """The common ``[YYYY-MM-DD HH:MM:SS TAGS] `` prefix without a regex search, or None."""
    if len(hdr) < 22 or hdr[0] != "[" or hdr[-2:] != "] ":
        return None
    ts = hdr[1:20]
    tags = hdr[20:-2]
    if not _STD_TS_RE.fullmatch(ts) or (tags and not _TAGS_RE.fullmatch(tags)):
        return None
    t = _TS_CACHE.get(ts)
    if t is None:
        t = _ts_miss(ts)
    dp, tp, pp, ep, other = _tags(tags)
    return (t, dp, tp, pp, ep, dict(other) if other else None)


def _header_for(text: str, i: int) -> tuple[Any, ...]:
    """Cached header tuple for ``text[:i]`` (the part before ``Decode batch``)."""
    hdr = text[:i]
    h = _HDR_CACHE.get(hdr)
    if h is None:
        h = _std_header(hdr)
        if h is None:
            h = _parse_header(hdr, i)[0]
        if len(_HDR_CACHE) >= _CACHE_MAX:
            _HDR_CACHE.clear()
        _HDR_CACHE[hdr] = h
    return h


# --------------------------------------------------------------------------
# key: value pairs of Decode / Prefill lines

_INT, _FLOAT, _BOOL = "int", "float", "bool"
_KNOWN: dict[str, tuple[str, str]] = {
    "#running-req": ("running_req", _INT),
    "#token": ("token", _INT),
    "#full token": ("token", _INT),
    "token usage": ("token_usage", _FLOAT),
    "full token usage": ("token_usage", _FLOAT),
    "swa token usage": ("swa_token_usage", _FLOAT),
    "mamba usage": ("mamba_usage", _FLOAT),
    "accept len": ("accept_len", _FLOAT),
    "accept rate": ("accept_rate", _FLOAT),
    "cuda graph": ("cuda_graph", _BOOL),
    "gen throughput (token/s)": ("gen_throughput", _FLOAT),
    "#queue-req": ("queue_req", _INT),
    "#new-seq": ("new_seq", _INT),
    "#new-token": ("new_token", _INT),
    "#cached-token": ("cached_token", _INT),
    "input throughput (token/s)": ("input_throughput", _FLOAT),
}
# Values of these change on every line; the others repeat and are converted once
# (a dict hit is several times cheaper than int()/float() of a fresh string).
_HIGH_ENTROPY = frozenset(
    {"token", "gen_throughput", "input_throughput", "new_token", "cached_token"}
)

# What a valid value looks like. Bounded, so int() never meets its digit limit
# and float() never overflows to inf.
_INT_PAT = r"-?[0-9]{1,18}"
_FLOAT_PAT = r"-?[0-9.]{1,40}"
_INT_RE = re.compile(_INT_PAT)
_FLOAT_RE = re.compile(_FLOAT_PAT)
_BOOLS = {"True": True, "False": False}
_NORM_RE = re.compile(r"[^0-9a-z]+")
_NORM_CACHE: dict[str, str] = {}
_ICACHE: dict[str, int] = {}
_FCACHE: dict[str, float] = {}
_CONV_CACHE_MAX = 65536


class _Bail(Exception):
    """A compiled shape cannot take this line; the generic parser will."""


def _to_int(v: str) -> int | None:
    return int(v) if _INT_RE.fullmatch(v) else None


def _to_float(v: str) -> float | None:
    if _FLOAT_RE.fullmatch(v):
        try:
            return float(v)
        except ValueError:
            return None
    return None


def _int_miss(s: str) -> int:
    v = _to_int(s)
    if v is None:
        raise _Bail
    if len(_ICACHE) < _CONV_CACHE_MAX:
        _ICACHE[s] = v
    return v


def _float_miss(s: str) -> float:
    v = _to_float(s)
    if v is None:
        raise _Bail
    if len(_FCACHE) < _CONV_CACHE_MAX:
        _FCACHE[s] = v
    return v


def _norm_key(key: str) -> str:
    """``'#prealloc-req'`` -> ``'prealloc_req'``, ``'npu graph'`` -> ``'npu_graph'``."""
    k = _NORM_CACHE.get(key)
    if k is None:
        k = _NORM_RE.sub("_", key.lower()).strip("_") or "field"
        if len(_NORM_CACHE) < _CACHE_MAX:
            _NORM_CACHE[key] = k
    return k


def _auto(value: str) -> Any:
    """Best-effort typed value for an unknown key: int, float, bool or the string."""
    v = value.strip()
    if _INT_RE.fullmatch(v):
        return int(v)
    f = _to_float(v)
    if f is not None:
        return f
    b = _BOOLS.get(v)
    return v if b is None else b


def _convert(kind: str, value: str) -> Any:
    """Typed value for a known key, or ``None`` when it does not look right."""
    if kind is _INT:
        return _to_int(value)
    if kind is _FLOAT:
        return _to_float(value)
    return _BOOLS.get(value)


def _body_start(text: str, pos: int) -> tuple[int, int | None, str | None]:
    """Skip the separator after ``Decode batch``/``Prefill batch``.

    Returns ``(position of the first pair, forward iteration or None, mixed-prefill text or None)``.
    """
    n = len(text)
    it = None
    mixed = None
    if text.startswith(" [", pos):
        j = text.find("]", pos + 2)
        num = text[pos + 2 : j] if j > 0 else ""
        if 0 < len(num) <= 18 and num.isdecimal() and num.isascii():
            it = int(num)
            pos = j + 1
    elif text.startswith("(", pos):
        j = text.find(")", pos)
        if j > 0:
            mixed = text[pos + 1 : j]
            pos = j + 1
    while pos < n and text[pos] in ".,: \t":
        pos += 1
    return pos, it, mixed


def _split_pairs(body: str) -> tuple[list[tuple[str, str]], bool]:
    """``key: value`` pairs of a body; the flag says every part was a clean pair."""
    pairs: list[tuple[str, str]] = []
    clean = True
    s = body.strip().rstrip(",").strip()
    if not s:
        return pairs, False
    for part in s.split(", "):
        k, sep, v = part.partition(": ")
        if not sep:
            k, sep, v = part.partition(":")
            clean = False
            if not sep:
                continue
        k = k.strip()
        if not k:
            clean = False
            continue
        pairs.append((k, v.strip()))
    return pairs, clean


def _batch_record(kind: str, text: str, i: int, skip: int) -> LogRecord | None:
    """The generic (reference) parser of a Decode/Prefill line starting its keyword at ``i``."""
    hdr = _header_for(text, i)
    pos, it, mixed = _body_start(text, i + skip)
    pairs, clean = _split_pairs(text[pos:])
    if not pairs:
        return None
    v = _EMPTY.copy()
    v[0] = kind
    v[1], v[2], v[3], v[4], v[5], hx = hdr
    extra: dict[str, Any] = {} if hx is None else dict(hx)
    if it is not None:
        extra["iter"] = it
    if mixed is not None:
        for k, val in _split_pairs(mixed.replace("mixed ", "", 1))[0]:
            extra["mixed_" + _norm_key(k)] = _auto(val)
    for k, val in pairs:
        known = _KNOWN.get(k)
        if known is not None:
            conv = _convert(known[1], val)
            if conv is not None:
                v[_SLOT[known[0]]] = conv
            else:
                extra[_norm_key(k)] = val
            continue
        if val.endswith("%"):
            pct = _to_float(val[:-1].strip())
            if pct is not None:
                extra[_norm_key(k) + "_pct"] = pct
                continue
        extra[_norm_key(k)] = _auto(val)
    v[-1] = extra
    rec = _build(v)
    if clean and mixed is None and len(pairs) <= 40:
        _learn_shape(kind, pairs)
    return rec


# --------------------------------------------------------------------------
# Shapes: compiled matchers for the key layouts already seen.
#
# Each shape has two matchers. The "full" one covers the whole standard line,
# ``[YYYY-MM-DD HH:MM:SS TAGS] Decode batch, k: v, ...``, prefix included, so the
# common case costs one re.match. The "body" one starts after the keyword and
# serves lines with other prefixes (Ray, time-only, foreign loggers).

_Shape = tuple[
    Callable[..., Any],
    Callable[..., LogRecord],
    Callable[..., Any],
    Callable[..., LogRecord],
    tuple[str, ...],
]
_SHAPES: dict[str, list[_Shape]] = {"decode": [], "prefill": []}
# (full matcher, full builder) of each shape, the lists parse_line walks
_FULL: dict[str, list[tuple[Callable[..., Any], Callable[..., LogRecord]]]] = {
    "decode": [],
    "prefill": [],
}
_DECODE_FULL = _FULL["decode"]
_PREFILL_FULL = _FULL["prefill"]
_MAX_SHAPES = 8
_KEYWORD = {"decode": "Decode batch", "prefill": "Prefill batch"}
# Loose on purpose (cheap for the regex engine): the builder checks the time
# and tag strings the first time it meets them (they are cached afterwards) and
# bails out to the generic parser when they are not ``_std_header``'s format.
_STD_PREFIX_PAT = r"\[(.{19})([^\]]*)\] "


def _ts_miss(ts: str) -> datetime | None:
    """Datetime of ``YYYY-MM-DD HH:MM:SS`` (None for an impossible date); _Bail for other text.

    The separator check plus fromisoformat (digits only, fixed widths) accept
    exactly what ``_STD_TS_RE`` does, for a third of its cost.
    """
    if ts[4:17:3] != "-- ::":
        raise _Bail
    try:
        t: datetime | None = _fromisoformat(ts)
    except ValueError:
        if not _STD_TS_RE.fullmatch(ts):
            raise _Bail from None
        t = None
    if len(_TS_CACHE) >= _CACHE_MAX:
        _TS_CACHE.clear()
    _TS_CACHE[ts] = t
    return t


def _tags_miss(tags: str) -> tuple[Any, ...]:
    if tags and not _TAGS_RE.fullmatch(tags):
        raise _Bail
    return _tags(tags)


def _learn_shape(kind: str, pairs: list[tuple[str, str]]) -> None:
    keys = tuple(k for k, _ in pairs)
    shapes = _SHAPES[kind]
    if any(s[4] == keys for s in shapes) or sum(k in _KNOWN for k in keys) < 2:
        return  # known already, or not an SGLang stats line (no compiling for random text)
    pct = []
    for k, val in pairs:
        if "," in k or "," in val:
            return
        pct.append(k not in _KNOWN and val.endswith("%"))
    try:
        entry = _compile_shape(kind, keys, tuple(pct))
    except Exception:  # pragma: no cover - defensive: never fail a parse
        return
    shapes.insert(0, entry)
    del shapes[_MAX_SHAPES:]
    _FULL[kind][:] = [(e[0], e[1]) for e in shapes]


def _compile_shape(kind: str, keys: tuple[str, ...], pct: tuple[bool, ...]) -> _Shape:
    """Matchers + builders for one key layout; they agree with ``_batch_record``.

    Whatever a builder cannot convert exactly as the generic parser would
    raises (``_Bail`` or ``ValueError``), and the caller falls back to it.
    """
    parts: list[str] = []
    body: list[str] = []
    assigned: set[str] = set()
    for n, k in enumerate(keys):
        g = f"g{n}"
        known = _KNOWN.get(k)
        lit = re.escape(k) + ": "
        if known is None:
            if pct[n]:  # stored as KEY_pct, like the generic parser does
                parts.append(lit + f"({_FLOAT_PAT})%")
                body.append(f"    ex[{_norm_key(k) + '_pct'!r}] = float({g})")
            else:  # '%' excluded: the generic parser would store those as KEY_pct
                parts.append(lit + "([^,%]*)")
                body.append(f"    ex[{_norm_key(k)!r}] = _auto({g})")
            continue
        fname, ftype = known
        assigned.add(fname)
        if ftype is _BOOL:
            parts.append(lit + "(True|False)")
            body.append(f"    o.{fname} = {g} == 'True'")
        elif fname in _HIGH_ENTROPY:
            parts.append(lit + (f"({_INT_PAT})" if ftype is _INT else f"({_FLOAT_PAT})"))
            body.append(f"    o.{fname} = {'int' if ftype is _INT else 'float'}({g})")
        else:
            parts.append(lit + r"([^,\s]*)")
            # a dict subscript is the cheapest hit; a miss (once per distinct value) raises
            cache, miss = ("_IC", "_int_miss") if ftype is _INT else ("_FC", "_float_miss")
            body += [
                "    try:",
                f"        o.{fname} = {cache}[{g}]",
                "    except KeyError:",
                f"        o.{fname} = {miss}({g})",
            ]
    body_pat = ", ".join(parts) + r"[,\s]*\Z"
    full_pat = (
        _STD_PREFIX_PAT + re.escape(_KEYWORD[kind]) + r"(?: \[([0-9]{1,18})\])?[,.] " + body_pat
    )
    gvars = ", ".join(f"g{n}" for n in range(len(keys)))
    nones = [n for n in _FIELD_NAMES[6:-1] if n not in assigned]
    tail = [f"    o.kind = {kind!r}", "    o.extra = ex"]
    if nones:
        tail.append("    " + " = ".join(f"o.{n}" for n in nones) + " = None")
    if _CLASS_SWITCH:
        tail += ["    o.__class__ = _Record", "    return o"]
    else:  # pragma: no cover
        tail += ["    return _Record(*[getattr(o, f) for f in _FIELDS])"]
    src = [
        "def build_body(m, hdr, it):",
        f"    ({gvars},) = m.groups()",
        "    o = _new(_Draft)",
        "    o.time, o.dp_rank, o.tp_rank, o.pp_rank, o.ep_rank, hx = hdr",
        "    ex = {} if hx is None else dict(hx)",
        "    if it is not None:",
        "        ex['iter'] = it",
        *body,
        *tail,
        "",
        "def build_full(m):",
        f"    ts, tags, it, {gvars} = m.groups()",
        "    t = _tsget(ts)",
        "    if t is None:",
        "        t = _ts_miss(ts)",
        "    r = _tagsget(tags)",
        "    if r is None:",
        "        r = _tags_miss(tags)",
        "    o = _new(_Draft)",
        "    o.time = t",
        "    o.dp_rank, o.tp_rank, o.pp_rank, o.ep_rank, hx = r",
        "    ex = {} if hx is None else dict(hx)",
        "    if it is not None:",
        "        ex['iter'] = int(it)",
        *body,
        *tail,
    ]
    ns: dict[str, Any] = {
        "_new": object.__new__, "_Draft": _Draft, "_Record": LogRecord, "_FIELDS": _FIELD_NAMES,
        "_auto": _auto, "_IC": _ICACHE, "_FC": _FCACHE,
        "_int_miss": _int_miss, "_float_miss": _float_miss,
        "_tsget": _TS_CACHE.get, "_ts_miss": _ts_miss, "_tagsget": _TAGS_CACHE.get, "_tags_miss": _tags_miss,
    }  # fmt: skip
    exec("\n".join(src) + "\n", ns)  # noqa: S102 - from _KNOWN field names and repr()'d keys
    return (
        re.compile(full_pat).match, ns["build_full"],
        re.compile(body_pat).match, ns["build_body"], keys,
    )  # fmt: skip


def _body_shape(kind: str, text: str, i: int, skip: int) -> LogRecord | None:
    """The body matchers, for lines whose prefix the full matchers do not cover."""
    shapes = _SHAPES[kind]
    if not shapes:
        return None
    pos = i + skip
    sep = text[pos : pos + 2]
    if sep == ", " or sep == ". ":
        pos += 2
        it = None
    else:
        pos, it, mixed = _body_start(text, pos)
        if mixed is not None:
            return None
    hdr = _header_for(text, i)
    for _, _, match, build_body, _ in shapes:
        m = match(text, pos)
        if m is not None:
            try:
                return build_body(m, hdr, it)
            except (_Bail, ValueError):
                return None
    return None


# --------------------------------------------------------------------------
# Everything that is not a batch line

# Cheap rejection. SGLang lines ("[time tags] message") are kept when the message
# starts with a milestone/ready/error phrase or mentions an error word; any other
# line (tracebacks, argparse, raw prints, foreign prefixes) when it contains one
# of the words every milestone, ready or error line has.
_MSG_PREFIXES = (
    "Load weight", "KV Cache", "Mamba Cache", "Memory pool end", "max_total_num_tokens=", "Capture ",
    "Init torch distributed", "The server is fired up", "INFO:     Uvicorn running",
    "Uvicorn running", "Received sigquit", "Health check failed", "Traceback", "Killed", "Rank ",
    "Initialization failed", "Not enough memory", "Port is already in use",
)  # fmt: skip
_BRACKET_WORDS = (
    "rror", "xception", "ERROR", "atchdog", "Traceback", "Cache is allocated",
    "out of memory", "ealth check failed", "in use",
)  # fmt: skip
_LOOSE_WORDS = _BRACKET_WORDS + (
    "fired up", "Load weight", "Memory pool end", "max_total_num_tokens=", "graph begin",
    "graph end", "Uvicorn running", "torch distributed", "Killed", "NCCL", "sigquit",
    "Initialization failed", "Not enough memory", "died during initialization",
)  # fmt: skip

_ERROR_CHECKS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("cuda_oom", re.compile(r"CUDA out of memory|OutOfMemoryError|CUDA error: out of memory")),
    ("not_enough_memory", re.compile(r"Not enough memory\. Please try to increase --mem-fraction")),
    (
        "address_in_use",
        re.compile(r"(?i:address already in use)|\[Errno 98\]|Port is already in use"),
    ),
    ("unrecognized_arguments", re.compile(r"error: unrecognized arguments")),
    (
        "invalid_argument",
        re.compile(r"error: argument \S+: |error: the following arguments are required"),
    ),
    (
        "nccl",
        re.compile(r"NCCL error|nccl\w*Error|NCCL WARN|NCCL timeout|WorkNCCL|ProcessGroupNCCL"),
    ),
    ("watchdog", re.compile(r"[Ww]atchdog timeout")),
    ("health_check", re.compile(r"(?i:health ?check failed)")),
    (
        "child_failed",  # 0.4.3 wrote "proces."
        re.compile(r"Received sigquit from a child proces|scheduler died during initialization"),
    ),
    ("init_failed", re.compile(r"Initialization failed\.")),
    ("killed", re.compile(r"Killed\Z")),
    ("traceback", re.compile(r"Traceback \(most recent call last\)")),
    (
        "exception",
        re.compile(
            r"(?:[A-Za-z_][\w.]*\.)?(?:[A-Z]\w*(?:Error|Exception)|Exception|Error)(?::|\Z)"
        ),
    ),
    ("error_log", re.compile(r"ERROR:\s")),
)
# the classes that must start the message; the others may appear anywhere in it
_ANCHORED = frozenset({"exception", "error_log", "killed"})

_MILESTONE_RE = re.compile(
    r"(?P<dist_init_begin>Init torch distributed begin)"
    r"|(?P<dist_init_end>Init torch distributed ends)"
    r"|(?P<weights_begin>Load weight begin)"
    r"|(?P<weights_loaded>Load weight end)"
    r"|(?P<kv_cache>KV Cache is allocated)"
    r"|(?P<mamba_cache>Mamba Cache is allocated)"
    r"|(?P<memory_pool_end>Memory pool end)"
    r"|(?P<cuda_graph_begin>Capture (?:[\w ]+ )?(?:cuda|[A-Z]+) graph begin)"
    r"|(?P<cuda_graph_end>Capture (?:[\w ]+ )?(?:cuda|[A-Z]+) graph end)"
    r"|(?P<max_total_num_tokens>max_total_num_tokens=)"
    r"|(?P<uvicorn_running>Uvicorn running on)"
)
_CAPTURE_RE = re.compile(r"Capture ([\w ]+) (?:cuda|[A-Z]+) graph (?:begin|end)")
_READY = "The server is fired up and ready to roll"
_LEVEL_RE = re.compile(r"(?:INFO|WARNING|DEBUG):\s+")
_KV_EQ_RE = re.compile(
    r"([A-Za-z_][\w ]*?)\s*=\s*(\[[^\]]*\]|[^,=]+?)(?=,|\.\s|\.?\s*$|\s+[A-Za-z_][\w ]*=)"
)
_KV_COLON_RE = re.compile(
    r"(#?[A-Za-z][\w #-]*?):\s*([^,]+?)(?=,|\.\s|\.?\s*$|\s+#?[A-Za-z_][\w -]*:\s)"
)
_QUANTITY_RE = re.compile(r"(-?[0-9]+(?:\.[0-9]+)?)\s*(GB|GiB|MB|s|ms)?\.?")
_URL_RE = re.compile(r"(https?://\S+?)(?::([0-9]+))?(?=[\s(]|$)")
_KEY_ALIASES = {"time_elapsed": "elapsed"}  # old "Time elapsed: 1.2 s", new "elapsed=1.2 s"


def _quantity(value: str) -> Any:
    """``'13.56 GB'`` -> 13.56 (GB), ``'12.96 s'`` -> 12.96 (seconds), ``'8192'`` -> 8192."""
    v = value.strip().rstrip(".")
    m = _QUANTITY_RE.fullmatch(v)
    if m is None:
        return _auto(v)
    num, unit = m.groups()
    if unit is None:
        return int(num) if "." not in num else float(num)
    x = float(num)
    if unit == "MB":
        x /= 1024
    elif unit == "ms":
        x /= 1000
    return x


def _milestone_extra(name: str, msg: str) -> dict[str, Any]:
    extra: dict[str, Any] = {}
    if name == "uvicorn_running":
        um = _URL_RE.search(msg)
        if um is not None:
            extra["url"] = um.group(1) + (":" + um.group(2) if um.group(2) else "")
            if um.group(2):
                extra["port"] = int(um.group(2))
        return extra
    if name.startswith("cuda_graph_"):
        cm = _CAPTURE_RE.search(msg)
        if cm is not None and cm.group(1) != "cuda":
            extra["graph"] = cm.group(1)
    for k, v in _KV_EQ_RE.findall(msg):
        key = _norm_key(k)
        extra[_KEY_ALIASES.get(key, key)] = _quantity(v)
    if name in ("kv_cache", "mamba_cache", "cuda_graph_end"):
        body = msg.split(". ", 1)[1] if ". " in msg else msg
        for k, v in _KV_COLON_RE.findall(body):
            key = _norm_key(k)
            key = _KEY_ALIASES.get(key, key)
            if key not in extra:
                extra[key] = _quantity(v)
    return extra


def _other_record(text: str) -> LogRecord | None:
    """Prefill, ready, milestone and error lines (the cheap rejections come first)."""
    p = text.find("Prefill batch")
    if p >= 0:
        for full, build in _PREFILL_FULL:
            m = full(text)
            if m is not None:
                try:
                    return build(m)
                except (_Bail, ValueError):
                    return _batch_record("prefill", text, p, 13)
        rec = _body_shape("prefill", text, p, 13)
        return rec if rec is not None else _batch_record("prefill", text, p, 13)
    if text[:1] == "[" and (j := text.find("] ")) > 0:
        if not text.startswith(_MSG_PREFIXES, j + 2):
            for w in _BRACKET_WORDS:
                if w in text:
                    break
            else:
                return None
    else:
        for w in _LOOSE_WORDS:
            if w in text:
                break
        else:
            return None
    return _classify(text)


def _classify(text: str) -> LogRecord | None:
    hdr, start = _parse_header(text, len(text))
    if start == 0 and text[:1] in (" ", "\t"):
        return None  # a traceback frame or source line; the "Traceback" and "XxxError:" lines count
    msg = text[start:].strip()
    if not msg:
        return None
    t, dp, tp, pp, ep, hx = hdr
    extra = {} if hx is None else dict(hx)
    for name, rx in _ERROR_CHECKS:
        m = rx.match(msg) if name in _ANCHORED else rx.search(msg)
        if m is not None:
            if name == "exception":
                extra["exception_type"] = msg[: m.end()].rstrip(":").rsplit(".", 1)[-1]
            return _record(
                "error", time=t, dp_rank=dp, tp_rank=tp, pp_rank=pp, ep_rank=ep,
                message=msg, error=name, extra=extra,
            )  # fmt: skip
    lm = _LEVEL_RE.match(msg)
    if lm is not None:
        msg = msg[lm.end() :]
    if _READY in msg:
        return _record(
            "ready", time=t, dp_rank=dp, tp_rank=tp, pp_rank=pp, ep_rank=ep,
            message=msg, extra=extra,
        )  # fmt: skip
    mm = _MILESTONE_RE.search(msg)
    if mm is not None:
        name = mm.lastgroup or ""
        extra.update(_milestone_extra(name, msg))
        return _record(
            "milestone", time=t, dp_rank=dp, tp_rank=tp, pp_rank=pp, ep_rank=ep,
            message=msg, milestone=name, extra=extra,
        )  # fmt: skip
    return None


# --------------------------------------------------------------------------
# Entry points


def _decode(text: str, i: int) -> LogRecord | None:
    rec = _body_shape("decode", text, i, 12)
    return rec if rec is not None else _batch_record("decode", text, i, 12)


def _clean(text: str) -> str:
    """Drop terminal escapes, and of a line redrawn in place (tqdm) keep the last frame."""
    if "\x1b" in text:
        text = _ANSI_RE.sub("", text)
    if "\r" in text:
        text = text.rstrip("\r\n").rsplit("\r", 1)[-1]
    return text


def _rest(text: str) -> LogRecord | None:
    """Every line without ``Decode batch``."""
    if "HTTP/1." in text and ' - "' in text:
        return None  # uvicorn access log
    if len(text) > 65536:  # the classes and milestones all show within the first 64 KiB
        text = text[:65536]
    return _other_record(text)


def parse_line(text: str) -> LogRecord | None:
    """Parse one log line; ``None`` for lines without console-relevant content.

    Never raises: any input (binary junk, truncated lines, huge lines) gives a
    record or ``None``.
    """
    try:
        if "\x1b" in text or "\r" in text:
            text = _clean(text)
        i = text.find("Decode batch")
        if i < 0:
            return _rest(text)
        # the hot path, inlined: one re.match against the shapes seen so far
        for full, build in _DECODE_FULL:
            m = full(text)
            if m is not None:
                try:
                    return build(m)
                except (_Bail, ValueError):
                    return _batch_record("decode", text, i, 12)
        return _decode(text, i)
    except Exception:
        if isinstance(text, (bytes, bytearray)):
            return parse_line(bytes(text).decode("utf-8", "replace"))
        return None


def iter_records(lines: Iterable[str]) -> Iterator[tuple[int, LogRecord]]:
    """``(1-based line number, record)`` for each line that parses to a record."""
    for lineno, line in enumerate(lines, 1):
        rec = parse_line(line.rstrip("\r\n") if isinstance(line, str) else line)
        if rec is not None:
            yield lineno, rec
