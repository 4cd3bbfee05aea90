"""Log lines for the live tail: decode lines with tok/s and accept length picked out, errors in
red."""

from __future__ import annotations

import re

from rich.text import Text

from sglconsole.core.sglang_log import parse_line
from sglconsole.core.sglang_log.record import LogRecord
from sglconsole.core.status_polls import PollRun
from sglconsole.core.text import clean
from sglconsole.tui.paint.palette import Palette

# the values an operator looks for in a decode line, wherever SGLang's version puts them
PICKED = re.compile(r"(gen throughput \(token/s\): [\d.]+|accept len: [\d.]+)")
KIND_STYLE = {"error": "bad", "ready": "good", "milestone": "accent"}


def log_line(raw: str, palette: Palette, condensed: bool = True) -> Text:
    line = clean(raw)
    record = parse_line(line)
    if record is not None and record.kind == "decode":
        return decode_summary(record, palette) if condensed else highlighted(line, palette)
    if record is not None and record.kind == "prefill" and condensed:
        return prefill_summary(record, palette)
    style = (
        getattr(palette, KIND_STYLE[record.kind])
        if record is not None and record.kind in KIND_STYLE
        else None
    )
    if record is None and ("Traceback" in line or "Error" in line):
        style = palette.bad
    return Text(line, style=style or "")


def highlighted(line: str, palette: Palette) -> Text:
    text = Text(line)
    text.highlight_regex(PICKED, style=palette.accent)
    return text


def decode_summary(record: LogRecord, palette: Palette) -> Text:
    """A decode line in one short line: the numbers, not SGLang's prose."""
    when = record.time.strftime("%H:%M:%S") if record.time else "--:--:--"
    rank = f" TP{record.tp_rank}" if record.tp_rank else ""  # rank 0 is where SGLang logs decode
    text = Text(f"{when}{rank} ", style=palette.muted)
    text.append(f"{record.gen_throughput or 0:.1f} tok/s", style=palette.accent)
    if record.accept_len is not None:
        text.append(f" accept {record.accept_len:.2f}", style=palette.accent)
    text.append(
        f"  run {record.running_req or 0} queue {record.queue_req or 0}", style=palette.muted
    )
    return text


def prefill_summary(record: LogRecord, palette: Palette) -> Text:
    when = record.time.strftime("%H:%M:%S") if record.time else "--:--:--"
    text = Text(f"{when} prefill ", style=palette.muted)
    text.append(
        f"{record.new_seq or 0} seq, {record.new_token or 0} new + "
        f"{record.cached_token or 0} cached tokens"
    )
    if record.input_throughput is not None:
        text.append(f", {record.input_throughput:.0f} tok/s in", style=palette.muted)
    return text


def poll_summary(run: PollRun, palette: Palette) -> Text:
    """A run of status polls in one muted line (v shows them all)."""
    return Text(f"… {run.summary()}", style=palette.muted)


def matches(raw: str, needle: str) -> bool:
    return not needle or needle.lower() in clean(raw).lower()
