"""Parse SGLang server log lines into typed records: the entry points.

Pure: standard library only, no I/O. ``parse_line`` turns one line of an SGLang
server log into a ``LogRecord`` (or ``None`` for lines that carry nothing the
console uses) and never raises. Formats handled, as seen in real logs from
SGLang 0.1 to 0.5.x, and where each part is read:

* the line prefix (timestamps, rank tags, Ray and foreign prefixes):
  ``sglang_log_prefix``;
* ``Decode batch`` / ``Prefill batch`` lines: the generic parser in
  ``sglang_log_batch`` (typed values in ``sglang_log_values``) and its compiled
  fast path in ``sglang_log_shapes``;
* the ready line, start-up milestones and error lines: ``sglang_log_events``;
* the record itself: ``sglang_log_record``.

Units in ``extra``: memory in GB, durations in seconds, values printed with a
``%`` sign get a ``_pct`` key suffix. Other ``extra`` keys: ``time_of_day``
(time-only prefixes), ``pid``/``ip`` (Ray prefix), ``iter`` (``Decode batch
[N]``), ``<tag>_rank`` for rank tags other than DP/TP/PP/EP, ``exception_type``.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from datetime import datetime

from sglconsole.core.sglang_log.batch import batch_record
from sglconsole.core.sglang_log.events import event_record
from sglconsole.core.sglang_log.prefix import clean_line, parse_header
from sglconsole.core.sglang_log.record import LogRecord
from sglconsole.core.sglang_log.shapes import ACTIVE_FULL, match_known_layout
from sglconsole.core.sglang_log.values import ShapeMismatch

__all__ = ["iter_records", "parse_line", "parse_time_prefix"]

_DECODE_FULL = ACTIVE_FULL["decode"]
_PREFILL_FULL = ACTIVE_FULL["prefill"]
_DECODE, _PREFILL = "Decode batch", "Prefill batch"
_MAX_SCANNED = 65536  # the classes and milestones all show within the first 64 KiB


def parse_time_prefix(text: str) -> datetime | None:
    """The timestamp of any SGLang-prefixed line (also lines ``parse_line`` drops)."""
    try:
        text = clean_line(text)
        return parse_header(text, len(text))[0][0]
    except Exception:
        return None


def _batch(kind: str, text: str, keyword_at: int, keyword_len: int) -> LogRecord | None:
    """A batch line no active layout took: a known layout, else the generic parser."""
    record = match_known_layout(kind, text, keyword_at, keyword_len)
    return record if record is not None else batch_record(kind, text, keyword_at, keyword_len)


def _not_decode(text: str) -> LogRecord | None:
    """Every line without ``Decode batch``."""
    if "HTTP/1." in text and ' - "' in text:
        return None  # uvicorn access log
    if len(text) > _MAX_SCANNED:
        text = text[:_MAX_SCANNED]
    keyword_at = text.find(_PREFILL)
    if keyword_at < 0:
        return event_record(text)
    for match_full, build_full in _PREFILL_FULL:
        found = match_full(text)
        if found is not None:
            try:
                return build_full(found)
            except (ShapeMismatch, ValueError):
                return batch_record("prefill", text, keyword_at, len(_PREFILL))
    return _batch("prefill", text, keyword_at, len(_PREFILL))


def parse_line(text: str) -> LogRecord | None:
    """Parse one log line; ``None`` for lines without console-relevant content.

    Never raises: any input (binary junk, truncated lines, huge lines) gives a
    record or ``None``.
    """
    try:
        if "\x1b" in text or "\r" in text:
            text = clean_line(text)
        keyword_at = text.find(_DECODE)
        if keyword_at < 0:
            return _not_decode(text)
        # the hot path, inlined: one re.match per active layout
        for match_full, build_full in _DECODE_FULL:
            found = match_full(text)
            if found is not None:
                try:
                    return build_full(found)
                except (ShapeMismatch, ValueError):
                    return batch_record("decode", text, keyword_at, len(_DECODE))
        return _batch("decode", text, keyword_at, len(_DECODE))
    except Exception:
        if isinstance(text, (bytes, bytearray)):
            return parse_line(bytes(text).decode("utf-8", "replace"))
        return None


def iter_records(lines: Iterable[str]) -> Iterator[tuple[int, LogRecord]]:
    """``(1-based line number, record)`` for each line that parses to a record."""
    for lineno, line in enumerate(lines, 1):
        record = parse_line(line.rstrip("\r\n") if isinstance(line, str) else line)
        if record is not None:
            yield lineno, record
