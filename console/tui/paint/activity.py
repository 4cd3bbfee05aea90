"""Progress of the running action, and the session's history of actions and alerts."""

from __future__ import annotations

import time

from rich.console import Group
from rich.text import Text

from console.actions import Stage, StageState
from console.render import clean
from console.tui.history import ActionRecord, AlertRecord
from console.tui.paint.palette import Palette

ICON = {StageState.RUNNING: "…", StageState.OK: "✓", StageState.FAILED: "✗", StageState.SKIPPED: "-"}
EVIDENCE_LINES = 8


def stage_line(stage: Stage, palette: Palette) -> Text:
    style = {StageState.OK: palette.good, StageState.FAILED: palette.bad, StageState.RUNNING: palette.accent}
    text = Text(f" {ICON[stage.state]} ", style=style.get(stage.state, palette.muted))
    text.append(f"{stage.name:<10}", style="bold")
    if stage.duration is not None:
        text.append(f" {stage.duration:5.1f}s", style=palette.muted)
    if stage.detail:
        text.append(" " + clean(stage.detail))
    return text


def outcome(record: ActionRecord, palette: Palette) -> Text:
    if record.running:
        return Text("running…", style=palette.accent)
    return Text(("done: " if record.ok else "FAILED: ") + clean(record.summary),
                style=palette.good if record.ok else palette.bad)


def progress(record: ActionRecord, palette: Palette) -> Group:
    head = Text.assemble((f"{record.action} {clean(record.target)}  ", "bold"), outcome(record, palette))
    lines = [head] + [stage_line(s, palette) for s in record.stages]
    lines += [Text("   " + clean(e), style=palette.muted) for e in record.evidence[-EVIDENCE_LINES:]]
    return Group(*lines)


def clock(when: float) -> str:
    return time.strftime("%H:%M:%S", time.localtime(when))


def history_line(entry: ActionRecord | AlertRecord, palette: Palette) -> Text:
    if isinstance(entry, AlertRecord):
        return Text.assemble((f"{clock(entry.time)} alert  {clean(entry.target)} {entry.old} → {entry.new}", palette.warn),
                             (f"  {clean(entry.reason)}", palette.muted))
    took = f" ({entry.ended - entry.started:.0f}s)" if entry.ended else ""
    return Text.assemble((f"{clock(entry.started)} {entry.action:<8} {clean(entry.target)}{took}  ", "bold"),
                         outcome(entry, palette))


def history(entries: list, palette: Palette) -> Group | Text:
    if not entries:
        return Text("nothing done yet this session; actions and alerts appear here", style=palette.muted)
    return Group(*(history_line(e, palette) for e in reversed(entries)))
