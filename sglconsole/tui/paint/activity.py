"""Progress of the running action, and the session's history of actions and alerts."""

from __future__ import annotations

import time
from datetime import datetime

from rich.console import Group
from rich.style import Style
from rich.table import Table
from rich.text import Text

from sglconsole.actions import Stage, StageState
from sglconsole.core.text import clean
from sglconsole.tui.history import ActionRecord, AlertRecord
from sglconsole.tui.paint.palette import Palette

ICON = {
    StageState.RUNNING: "…",
    StageState.OK: "✓",
    StageState.FAILED: "✗",
    StageState.SKIPPED: "-",
}
EVIDENCE_LINES = 8


def stage_row(stage: Stage, palette: Palette) -> tuple[Text, Text, Text, Text]:
    style = {
        StageState.OK: palette.good,
        StageState.FAILED: palette.bad,
        StageState.RUNNING: palette.accent,
    }
    took = f"{stage.duration:.1f}s" if stage.duration is not None else ""
    return (
        Text(ICON[stage.state], style=style.get(stage.state, palette.muted)),
        Text(stage.name, style="bold"),
        Text(took, style=palette.muted),
        Text(clean(stage.detail)),
    )


def stages_table(stages: list[Stage], palette: Palette) -> Table:
    """One row per stage; a long detail wraps under itself, not under the stage's name."""
    table = Table.grid(padding=(0, 1))
    table.add_column(no_wrap=True)
    table.add_column(no_wrap=True)
    table.add_column(no_wrap=True, justify="right")
    table.add_column(overflow="fold")
    for stage in stages:
        table.add_row(*stage_row(stage, palette))
    return table


def outcome(record: ActionRecord, palette: Palette) -> Text:
    if record.running:
        return Text("running…", style=palette.accent)
    return Text(
        ("done: " if record.ok else "FAILED: ") + clean(record.summary),
        style=palette.good if record.ok else palette.bad,
    )


def progress(record: ActionRecord, palette: Palette) -> Group:
    head = Text.assemble(
        (f"{record.action} {clean(record.target)}  ", "bold"), outcome(record, palette)
    )
    evidence = [
        Text("   " + clean(line), style=palette.muted) for line in record.evidence[-EVIDENCE_LINES:]
    ]
    return Group(head, stages_table(record.stages, palette), *evidence)


def clock(when: float) -> str:
    return time.strftime("%H:%M:%S", time.localtime(when))


def history_line(entry: ActionRecord | AlertRecord, palette: Palette) -> Text:
    if isinstance(entry, AlertRecord):
        return Text.assemble(
            (
                f"{clock(entry.time)} alert  {clean(entry.target)} {entry.old} → {entry.new}",
                palette.warn,
            ),
            (f"  {clean(entry.reason)}", palette.muted),
        )
    took = f" ({entry.ended - entry.started:.0f}s)" if entry.ended else ""
    return Text.assemble(
        (f"{clock(entry.started)} {entry.action:<8} {clean(entry.target)}{took}  ", "bold"),
        outcome(entry, palette),
    )


def history(entries: list, palette: Palette, audit: list[dict] | None = None, running=()) -> Group:
    """This session's actions and alerts, newest first; then AUDIT: the audit log's recent
    actions of every console and the CLI (RUNNING: HOST:PORT this console acts on now)."""
    parts: list = [Text("This session", style="bold underline")]
    if entries:
        parts += [history_line(entry, palette) for entry in reversed(entries)]
    else:
        parts.append(
            Text(
                "nothing done yet this session; actions and alerts appear here", style=palette.muted
            )
        )
    if audit is not None:
        parts += [
            Text(""),
            Text(
                "Audit log: every console and the CLI on this machine, newest first",
                style="bold underline",
            ),
        ]
        parts += [audit_line(record, palette, set(running)) for record in audit] or [
            Text("no action recorded yet", style=palette.muted)
        ]
    return Group(*parts)


def _when(stamp: object) -> datetime | None:
    try:
        return datetime.strptime(str(stamp), "%Y-%m-%dT%H:%M:%S%z")
    except ValueError:
        return None


def audit_line(record: dict, palette: Palette, running: set[str]) -> Text:
    """One action of the audit log: when, what, where, who, and how it ended (or that it never
    did: a begin with no end is a server an interrupted action may have left half done)."""
    began, ended = _when(record.get("time")), _when(record.get("end_time"))
    when = began.astimezone().strftime("%m-%d %H:%M:%S") if began else "?"
    target = f"{record.get('host', '?')}:{record.get('port', '?')}"
    took = f" ({(ended - began).total_seconds():.0f}s)" if began and ended else ""
    who = f"{record.get('user', '?')}@{record.get('console_host', '?')}"
    head = Text.assemble(
        (f"{when} {clean(record.get('action', '?')):<8} {clean(target)}{took}  ", "bold"),
        (f"{clean(who)}  ", palette.muted),
    )
    if record.get("phase") != "end":
        if target in running:
            head.append("running…", style=palette.accent)
        else:
            head.append("never finished — check the server", style=Style(bold=True) + palette.bad)
        return head
    succeeded = bool(record.get("ok"))
    head.append(
        ("done: " if succeeded else "FAILED: ") + clean(record.get("outcome", "")),
        style=palette.good if succeeded else palette.bad,
    )
    return head
