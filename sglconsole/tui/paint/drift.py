"""The drift table: profile | running | resolved, differences first and highlighted."""

from __future__ import annotations

import re

from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text

from sglconsole.core.drift import Report, Row, State
from sglconsole.core.drift_meaning import meaning_lines
from sglconsole.core.secrets import mask_argv, mask_env
from sglconsole.core.text import clean
from sglconsole.state.fleet import ServerState
from sglconsole.tui.paint.palette import Palette

WIDE = 90
MARK = {
    State.SAME: " ",
    State.DIFFERENT: "≠",
    State.ONLY_PROFILE: "−",
    State.ONLY_RUNNING: "+",
    State.DEFAULTED_DIFFERENTLY: "~",
    State.NO_EFFECT: "·",
}
LEGEND = (
    "≠ differs   − only in the profile   + only running   "
    "~ SGLang's default differs from the profile"
)


def drift_view(server: ServerState, palette: Palette, width: int) -> RenderableType:
    report = server.drift
    if server.profile is None:
        return Text(
            "not in hosts.yaml: no profile to compare with (c captures it as one)",
            style=palette.muted,
        )
    if server.process is None:  # a comparison kept from a process now gone is not "running"
        return not_running(server, palette)
    if report is None:
        why = server.drift_error or "compared once the server answers /server_info"
        return Text(f"no comparison yet: {clean(why)}", style=palette.muted)
    parts: list[RenderableType] = [summary(report, palette), version_line(report, palette)]
    parts += [
        Text(f"{clean(where)}: {clean(error)}", style=palette.warn)
        for where, error in report.errors.items()
    ]
    parts += [rows_table(report, palette, width), Text(LEGEND, style=palette.muted)]
    parts += container_part(report, palette, width)
    parts += [Text(clean(line)) for line in meaning_lines(report.rows)]  # and who judged
    parts += [Text(clean(line), style=palette.muted) for line in report.note_lines()]
    if report.build_line():
        parts.append(Text(clean(report.build_line())))
    if report.ambient_line():
        parts.append(Text(clean(report.ambient_line()), style=palette.muted))
    parts += [Text(clean(note), style=palette.muted) for note in report.notes]  # --config FILE
    return Group(*parts)


def not_running(server: ServerState, palette: Palette) -> RenderableType:
    """A server that is not running has no running config: what its profile launches, alone."""
    profile = server.profile
    lines = [
        Text(
            f"not running: nothing to compare; its profile {clean(server.profile_name or '')} "
            "launches:",
            style=palette.muted,
        )
    ]
    lines += [
        Text(f"  ${clean(name)}={clean(value)}") for name, value in mask_env(profile.env).items()
    ]
    args = [clean(arg) for arg in mask_argv(profile.args)]
    for index, arg in enumerate(args):
        if arg.startswith("-") or index == 0:
            lines.append(Text("  " + arg))
        else:
            lines[-1].append(" " + arg)
    return Group(*lines)


def container_part(report: Report, palette: Palette, width: int) -> list[RenderableType]:
    """The image and the `run` options, a table apart from SGLang's flags, with its notes."""
    if not report.container:
        return []
    table = Table(box=None, pad_edge=False, show_edge=False, header_style="bold", width=width)
    table.add_column("", no_wrap=True, width=1)
    for name in ("container", "profile", "running"):
        table.add_column(name, overflow="fold", ratio=1)
    for row in report.container:
        style = (palette.bad if row.performance else palette.warn) if row.differs else ""
        shown = ["unset" if value is None else clean(str(value)) for value in (row.profile,
                 row.running)]  # fmt: skip
        table.add_row("≠" if row.differs else " ", row.label, *shown, style=style)
    notes = [Text(f"{row.label}: {clean(row.note)}", style=palette.muted)
             for row in report.container if row.note]  # fmt: skip
    return [table, *notes]


def summary(report: Report, palette: Palette) -> Text:
    diffs = report.differences + [row for row in report.container if row.differs]
    if not report.differs:
        return Text("running config matches the profile", style=palette.good)
    slow = sum(row.performance for row in diffs)
    return Text(
        f"{report.count} difference{'s' if report.count != 1 else ''} from the profile; "
        f"the {slow} that affect speed come first, highlighted",
        style=palette.warn,
    )


def version_line(report: Report, palette: Palette) -> Text:
    version = clean(report.version or "unknown")
    if report.requires is None:
        return Text(f"sglang {version}", style=palette.muted)
    verdicts = {
        True: ("satisfies", palette.good),
        False: ("does NOT satisfy", palette.bad),
        None: ("vs", palette.muted),
    }
    word, style = verdicts[report.version_ok]
    return Text(f"sglang {version} {word} the profile's {clean(report.requires)}", style=style)


def rows_table(report: Report, palette: Palette, width: int) -> Table:
    wide = width >= WIDE
    table = Table(box=None, pad_edge=False, show_edge=False, header_style="bold", width=width)
    table.add_column("", no_wrap=True, width=1)
    # the setting's name is read first: its full length, as long as each value keeps 10 cells
    longest = max((len(row.flag) + 1 for row in report.rows), default=8)
    values = 3 if wide else 2
    room = max(8, min(longest, width - 4 - 11 * values))
    table.add_column("setting", overflow="fold", min_width=room, max_width=room)
    for name in ("profile", "running") + (("resolved",) if wide else ()):
        table.add_column(name, overflow="fold", ratio=1)
    # a value's share of what is left, a little short of Rich's: a path then breaks at a `/`
    # that fits rather than mid-name (1 cell per gap between columns, 2 for safety)
    value_room = max(8, (width - 1 - room - 2 * (values + 1)) // values)
    for row in report.rows:
        cols = cells(row, palette, wide)
        cols[1] = Text(at_hyphens(cols[1].plain, room), style=cols[1].style)
        for index in range(2, len(cols)):
            if "/" in cols[index].plain and cols[index].cell_len > value_room:
                plain_value = at_slashes(cols[index].plain, value_room)
                cols[index] = Text(plain_value, style=cols[index].style)
        table.add_row(*cols, style=_style(row, palette))
    return table


def at_slashes(path: str, width: int) -> str:
    """A long path on as many lines as it needs, broken after a `/` (/srv/models/ / Qwen3-8B),
    never mid-name; a name longer than the width after its hyphens (Qwen3-Next-80B- / A3B-FP8)."""
    parts = []
    for name in re.split(r"(?<=/)(?=[^/])", path):
        parts += re.split(r"(?<=[^-]-)", name) if len(name) > width else [name]
    return _broken(parts, width)


def at_hyphens(name: str, width: int) -> str:
    """A long flag name on as many lines as it needs, broken after a hyphen (--speculative-num-
    / draft-tokens), never mid-word; a word longer than the width is folded as it must."""
    return _broken(re.split(r"(?<=[^-]-)", name), width)


def _broken(parts: list[str], width: int) -> str:
    lines: list[str] = []
    for part in parts:
        if lines and len(lines[-1]) + len(part) <= width:
            lines[-1] += part
        else:
            lines.append(part)
    return "\n".join(lines)


def cells(row: Row, palette: Palette, wide: bool) -> list[Text]:
    profile, running, resolved = (
        value(row.shown(raw)) for raw in (row.profile, row.running, row.resolved)
    )
    name = Text(("$" if row.kind == "env" else "") + clean(row.flag))
    if wide:
        return [Text(MARK[row.state]), name, profile, running, resolved]
    if row.resolved != row.running and row.resolved is not None:
        running = Text.assemble(
            running, " → ", resolved
        )  # the value SGLang settled on, when it is not what was given
    return [Text(MARK[row.state]), name, profile, running]


def value(raw: object) -> Text:
    return Text("unset", style="dim italic") if raw is None else Text(clean(raw))


def _style(row: Row, palette: Palette):
    if row.state in (State.SAME, State.NO_EFFECT):
        return palette.muted
    return palette.warn if row.performance else "bold"
