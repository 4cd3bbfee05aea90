"""Small helpers the widgets share."""

from __future__ import annotations

from rich.text import Text
from textual.widget import Widget
from textual.widgets import Static

from sglconsole.tui.paint.palette import Palette, palette_of

DEFAULT_WIDTH = 60


def palette(widget: Widget) -> Palette:
    return palette_of(widget.app.current_theme)


def width(widget: Widget) -> int:
    """The cells a widget's content gets (a sensible guess before the first layout)."""
    return widget.scrollable_content_region.width or DEFAULT_WIDTH


def show(static: Static, renderable, cells: int) -> None:
    """Render `renderable` for `cells` columns once; skip the update when it reads the same, and
    skip the screen's layout pass when its height did not change (most refreshes: new numbers)."""
    console = static.app.console
    lines = console.render_lines(renderable, console.options.update_width(max(1, cells)), pad=False)
    key = tuple(tuple((segment.text, segment.style) for segment in line) for line in lines)
    previous = getattr(static, "_sglc_shown", None)
    if key == previous:
        return
    static._sglc_shown = key
    text = Text("\n").join(
        Text.assemble(*((segment.text, segment.style) for segment in line)) for line in lines
    )
    static.update(text, layout=previous is None or len(previous) != len(key))
