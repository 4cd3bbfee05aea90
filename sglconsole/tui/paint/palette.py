"""Status colours taken from the active Textual theme, so badges read well on dark and light themes.

A problem badge is a filled block (theme colour behind black or white text);
UP and UNKNOWN stay plain text so a healthy fleet is calm to look at. Under
NO_COLOR Textual greys everything out and the badge's word still says it all.
"""

from __future__ import annotations

from dataclasses import dataclass

from rich.style import Style
from rich.text import Text
from textual.color import Color
from textual.theme import Theme

from sglconsole.state.fleet import Status
from sglconsole.state.statuses import STATUSES

# which theme colour each status borrows, and which are filled blocks: the status records say
ROLE = {record.status: record.role for record in STATUSES}
FILLED = {record.status for record in STATUSES if not record.calm}
MUTED = "muted"  # the role of a status drawn dim, whatever the theme


@dataclass(frozen=True)
class Palette:
    status: dict[Status, Style]
    good: Style
    warn: Style
    bad: Style
    accent: Style
    muted: Style

    def badge(self, status: Status) -> Text:
        return Text(f" {status.value} ", style=self.status[status])


def _color(theme: Theme, role: str, fallback: str) -> Color:
    value = getattr(theme, role, None) or fallback
    return Color.parse(value)


LIGHT_ANSI = {
    2,
    3,
    6,
    7,
    10,
    11,
    14,
    15,
}  # green, yellow, cyan, white (and bright): dark text on them


def _filled(color: Color) -> Style:
    light = color.ansi in LIGHT_ANSI if color.ansi is not None else color.brightness > 0.55
    return Style(color="black" if light else "white", bgcolor=color.rich_color, bold=True)


def _plain(color: Color, dark: bool) -> Style:
    # mid-tone theme colours are faint as text on a light background: darken them there
    shown = color if dark or color.ansi is not None else color.darken(0.25)
    return Style(color=shown.rich_color, bold=True)


def _build(theme: Theme) -> Palette:
    fallback = "white" if theme.dark else "black"
    colors = {role: _color(theme, role, fallback) for role in set(ROLE.values()) - {MUTED}}
    dark = theme.dark
    status = {
        state: (
            Style(dim=True)
            if role == MUTED
            else _filled(colors[role])
            if state in FILLED
            else _plain(colors[role], dark)
        )
        for state, role in ROLE.items()
    }
    return Palette(
        status,
        _plain(colors["success"], dark),
        _plain(colors["warning"], dark),
        _plain(colors["error"], dark),
        _plain(_color(theme, "accent", fallback), dark),
        Style(dim=True),
    )


_BUILT: dict[str, Palette] = {}  # theme name -> palette: themes are not hashable


def palette_of(theme: Theme) -> Palette:
    if theme.name not in _BUILT:
        _BUILT[theme.name] = _build(theme)
    return _BUILT[theme.name]
