"""The ``key: value`` fields of Decode/Prefill batch lines: known keys, typed values.

Maps SGLang's keys (``#running-req``, ``gen throughput (token/s)`` ...) to
``LogRecord`` fields, normalises unknown keys to snake_case ``extra`` names and
converts values exactly once per distinct string where values repeat.
"""

from __future__ import annotations

import re
from typing import Any

INT, FLOAT, BOOL = "int", "float", "bool"

#: SGLang key -> (LogRecord field, value type)
KNOWN_KEYS: dict[str, tuple[str, str]] = {
    "#running-req": ("running_req", INT),
    "#token": ("token", INT),
    "#full token": ("token", INT),
    "token usage": ("token_usage", FLOAT),
    "full token usage": ("token_usage", FLOAT),
    "swa token usage": ("swa_token_usage", FLOAT),
    "mamba usage": ("mamba_usage", FLOAT),
    "accept len": ("accept_len", FLOAT),
    "accept rate": ("accept_rate", FLOAT),
    "cuda graph": ("cuda_graph", BOOL),
    "gen throughput (token/s)": ("gen_throughput", FLOAT),
    "#queue-req": ("queue_req", INT),
    "#new-seq": ("new_seq", INT),
    "#new-token": ("new_token", INT),
    "#cached-token": ("cached_token", INT),
    "input throughput (token/s)": ("input_throughput", FLOAT),
}
# Values of these change on every line; the others repeat and are converted once
# (a dict hit is several times cheaper than int()/float() of a fresh string).
HIGH_ENTROPY_FIELDS = frozenset(
    {"token", "gen_throughput", "input_throughput", "new_token", "cached_token"}
)

# What a valid value looks like. Bounded, so int() never meets its digit limit
# and float() never overflows to inf.
INT_PATTERN = r"-?[0-9]{1,18}"
FLOAT_PATTERN = r"-?[0-9.]{1,40}"
_INT_RE = re.compile(INT_PATTERN)
_FLOAT_RE = re.compile(FLOAT_PATTERN)
_BOOLS = {"True": True, "False": False}
_NON_ALNUM_RE = re.compile(r"[^0-9a-z]+")
_KEY_NAME_CACHE: dict[str, str] = {}
_KEY_NAME_CACHE_MAX = 4096
INT_CACHE: dict[str, int] = {}
FLOAT_CACHE: dict[str, float] = {}
_VALUE_CACHE_MAX = 65536


class ShapeMismatch(Exception):
    """A compiled line layout cannot take this line; the generic parser will."""


def to_int(text: str) -> int | None:
    return int(text) if _INT_RE.fullmatch(text) else None


def to_float(text: str) -> float | None:
    if _FLOAT_RE.fullmatch(text):
        try:
            return float(text)
        except ValueError:
            return None
    return None


def int_miss(text: str) -> int:
    """``int`` of a value not in ``INT_CACHE`` yet; ``ShapeMismatch`` if it is no int."""
    value = to_int(text)
    if value is None:
        raise ShapeMismatch
    if len(INT_CACHE) < _VALUE_CACHE_MAX:
        INT_CACHE[text] = value
    return value


def float_miss(text: str) -> float:
    """``float`` of a value not in ``FLOAT_CACHE`` yet; ``ShapeMismatch`` if it is no float."""
    value = to_float(text)
    if value is None:
        raise ShapeMismatch
    if len(FLOAT_CACHE) < _VALUE_CACHE_MAX:
        FLOAT_CACHE[text] = value
    return value


def key_name(key: str) -> str:
    """``'#prealloc-req'`` -> ``'prealloc_req'``, ``'npu graph'`` -> ``'npu_graph'``."""
    name = _KEY_NAME_CACHE.get(key)
    if name is None:
        name = _NON_ALNUM_RE.sub("_", key.lower()).strip("_") or "field"
        if len(_KEY_NAME_CACHE) < _KEY_NAME_CACHE_MAX:
            _KEY_NAME_CACHE[key] = name
    return name


def guess_value(text: str) -> Any:
    """Best-effort typed value for an unknown key: int, float, bool or the string."""
    stripped = text.strip()
    if _INT_RE.fullmatch(stripped):
        return int(stripped)
    number = to_float(stripped)
    if number is not None:
        return number
    flag = _BOOLS.get(stripped)
    return stripped if flag is None else flag


def convert_known(value_type: str, text: str) -> Any:
    """Typed value for a known key, or ``None`` when it does not look right."""
    if value_type is INT:
        return to_int(text)
    if value_type is FLOAT:
        return to_float(text)
    return _BOOLS.get(text)
