"""Small helpers the widgets share."""

from __future__ import annotations

from rich.box import Box
from rich.console import Group
from rich.segment import Segment
from rich.style import Style
from rich.table import Column, Row, Table
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
    skip the screen's layout pass when its height did not change (most refreshes: new numbers).

    A Group is rendered part by part, and a part that reads as it did last time (the same text,
    the same table cells: `frozen`) keeps its lines: a host whose uptime ticks lays out its
    server table again, not its GPU table and the rest."""
    console = static.app.console
    options = console.options.update_width(max(1, cells))
    parts = renderable.renderables if isinstance(renderable, Group) else [renderable]
    before: dict = getattr(static, "_sglc_parts", {})
    kept: dict = {}
    lines: list[list[Segment]] = []
    for part in parts:
        key = frozen(part)
        rendered = before.get((key, cells)) if key is not None else None
        if rendered is None:
            rendered = console.render_lines(part, options, pad=False)
        if key is not None:
            kept[(key, cells)] = rendered
        lines.extend(rendered)
    static._sglc_parts = kept
    key = tuple(tuple((segment.text, segment.style) for segment in line) for line in lines)
    previous = getattr(static, "_sglc_shown", None)
    if key == previous:
        return
    static._sglc_shown = key
    text = Text("\n").join(
        Text.assemble(*((segment.text, segment.style) for segment in line)) for line in lines
    )
    static.update(text, layout=previous is None or len(previous) != len(key))


_PLAIN = (str, int, float, bool, type(None), Style, Box)
"""Values a renderable's record may hold that say all they draw (a Box is one of rich's
constants)."""


def frozen(value):
    """A hashable record of all a Text or Table (and what they hold) draws, or None for anything
    else (drawn again every time: never a stale line)."""
    if isinstance(value, _PLAIN):
        return value
    if isinstance(value, (list, tuple)):
        items = [(item, frozen(item)) for item in value]
        if any(record is None and item is not None for item, record in items):
            return None
        return (type(value).__name__, *(record for _, record in items))
    if not isinstance(value, (Text, Table, Column, Row)):
        return None
    record = [type(value).__name__]
    for name, item in _attributes(value):
        item_record = frozen(item)
        if item_record is None and item is not None:
            return None
        record.append((name, item_record))
    return tuple(record)


def _attributes(value) -> list[tuple[str, object]]:
    """Every attribute of VALUE (slots and __dict__), by name."""
    names = {name for klass in type(value).__mro__ for name in getattr(klass, "__slots__", ())}
    names |= set(getattr(value, "__dict__", {}))
    return sorted((name, getattr(value, name, None)) for name in names)
