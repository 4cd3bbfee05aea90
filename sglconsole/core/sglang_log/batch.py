"""The generic (reference) parser of Decode/Prefill batch lines.

Reads the ``key: value`` pairs after ``Decode batch.`` (old), ``Decode batch,``
or ``Decode batch [123],``, so fields that come and go between versions (accept
len, mamba/swa usage, disaggregation queues, ``cuda graph``/``npu graph``, MFU
estimates ...) all parse; unknown keys land in ``extra``. Each clean line
teaches its layout to the compiled fast path (``sglang_log_shapes``).
"""

from __future__ import annotations

from typing import Any

from sglconsole.core.sglang_log.prefix import header_before
from sglconsole.core.sglang_log.record import FIELD_SLOT, NO_VALUES, LogRecord, build_record
from sglconsole.core.sglang_log.shapes import body_start, learn_shape
from sglconsole.core.sglang_log.values import (
    KNOWN_KEYS,
    convert_known,
    guess_value,
    key_name,
    to_float,
)

_MAX_LEARNED_PAIRS = 40  # longer layouts are no SGLang stats line: not worth compiling


def split_pairs(body: str) -> tuple[list[tuple[str, str]], bool]:
    """``key: value`` pairs of a body; the flag says every part was a clean pair."""
    pairs: list[tuple[str, str]] = []
    clean = True
    stripped = body.strip().rstrip(",").strip()
    if not stripped:
        return pairs, False
    for part in stripped.split(", "):
        key, separator, value = part.partition(": ")
        if not separator:
            key, separator, value = part.partition(":")
            clean = False
            if not separator:
                continue
        key = key.strip()
        if not key:
            clean = False
            continue
        pairs.append((key, value.strip()))
    return pairs, clean


def batch_record(kind: str, text: str, keyword_at: int, keyword_len: int) -> LogRecord | None:
    """Parse a Decode/Prefill line whose keyword starts at ``keyword_at``."""
    header = header_before(text, keyword_at)
    pos, iteration, mixed = body_start(text, keyword_at + keyword_len)
    pairs, clean = split_pairs(text[pos:])
    if not pairs:
        return None
    row = NO_VALUES.copy()
    row[0] = kind
    row[1], row[2], row[3], row[4], row[5], header_extra = header
    extra: dict[str, Any] = {} if header_extra is None else dict(header_extra)
    if iteration is not None:
        extra["iter"] = iteration
    if mixed is not None:
        for key, value in split_pairs(mixed.replace("mixed ", "", 1))[0]:
            extra["mixed_" + key_name(key)] = guess_value(value)
    for key, value in pairs:
        known = KNOWN_KEYS.get(key)
        if known is not None:
            converted = convert_known(known[1], value)
            if converted is not None:
                row[FIELD_SLOT[known[0]]] = converted
            else:
                extra[key_name(key)] = value
            continue
        if value.endswith("%"):
            percent = to_float(value[:-1].strip())
            if percent is not None:
                extra[key_name(key) + "_pct"] = percent
                continue
        extra[key_name(key)] = guess_value(value)
    row[-1] = extra
    record = build_record(row)
    if clean and mixed is None and len(pairs) <= _MAX_LEARNED_PAIRS:
        learn_shape(kind, pairs, text, pos)
    return record
