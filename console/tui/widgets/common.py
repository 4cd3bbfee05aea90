"""Small helpers the widgets share."""

from __future__ import annotations

from textual.widget import Widget

from console.tui.paint.palette import Palette, palette_of

DEFAULT_WIDTH = 60


def palette(widget: Widget) -> Palette:
    return palette_of(widget.app.current_theme)


def width(widget: Widget) -> int:
    """The cells a widget's content gets (a sensible guess before the first layout)."""
    return widget.scrollable_content_region.width or DEFAULT_WIDTH
