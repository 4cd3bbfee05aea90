"""The typed record of one SGLang log line, and the fast way to build it.

A frozen dataclass ``__init__`` stores each of its 24 fields through
``object.__setattr__``, which costs about as much as parsing the line. ``Draft``
has the same slots and no frozen ``__setattr__``: builders fill a ``Draft`` with
plain attribute stores, then switch its class to ``LogRecord`` (same layout, so
CPython allows it). The result is an ordinary, frozen ``LogRecord``. If the
switch ever fails (another interpreter), the builders call ``LogRecord(...)``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, fields
from datetime import datetime
from typing import Any

__all__ = ["KINDS", "LogRecord"]

KINDS = ("decode", "prefill", "ready", "milestone", "error")


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
        out = {name: getattr(self, name) for name in FIELD_NAMES}
        if self.time is not None:
            out["time"] = self.time.isoformat()
        out["extra"] = dict(self.extra) if self.extra else {}
        return out


FIELD_NAMES = tuple(record_field.name for record_field in fields(LogRecord))
FIELD_SLOT = {name: index for index, name in enumerate(FIELD_NAMES)}
NO_VALUES = [None] * len(FIELD_NAMES)  # copy it, then fill in what the line has


class Draft:
    """A ``LogRecord`` under construction: same slots, plain attribute stores."""

    __slots__ = LogRecord.__slots__


def _probe_class_switch() -> bool:
    try:
        draft = object.__new__(Draft)
        for name in FIELD_NAMES:
            setattr(draft, name, None)
        draft.kind = "decode"
        draft.extra = {}
        draft.__class__ = LogRecord
        return type(draft) is LogRecord and draft == LogRecord(kind="decode")
    except Exception:  # pragma: no cover - depends on the interpreter
        return False


CLASS_SWITCH = _probe_class_switch()


def _generate_list_builder() -> Callable[[list[Any]], LogRecord]:
    """``build(values)``: a LogRecord from a list of all field values in order."""
    targets = ", ".join(f"record.{name}" for name in FIELD_NAMES)
    if CLASS_SWITCH:
        source = (
            "def build(values):\n"
            "    record = _new(_Draft)\n"
            f"    ({targets},) = values\n"
            "    record.__class__ = _Record\n"
            "    return record\n"
        )
    else:  # pragma: no cover
        source = "def build(values):\n    return _Record(*values)\n"
    namespace: dict[str, Any] = {"_new": object.__new__, "_Draft": Draft, "_Record": LogRecord}
    exec(source, namespace)  # noqa: S102 - generated from the fixed field list above
    return namespace["build"]


#: ``build_record(values)``: a LogRecord from a full list of field values, in field order
build_record = _generate_list_builder()


def new_record(kind: str, **values: Any) -> LogRecord:
    """A LogRecord of ``kind`` with the given fields (fast path of ``LogRecord(...)``)."""
    row = NO_VALUES.copy()
    row[0] = kind
    for name, value in values.items():
        row[FIELD_SLOT[name]] = value
    if row[-1] is None:
        row[-1] = {}
    return build_record(row)
