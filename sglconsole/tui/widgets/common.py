"""Small helpers the widgets share."""

from __future__ import annotations

from functools import cache
from operator import itemgetter

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
    parts = renderable.renderables if isinstance(renderable, Group) else [renderable]
    keys = tuple(frozen(part) for part in parts)
    if None not in keys and getattr(static, "_sglc_keys", None) == (keys, cells):
        return  # every part reads as it did: the same lines (most updates of an idle pane)
    static._sglc_keys = (keys, cells)
    console = static.app.console
    options = console.options.update_width(max(1, cells))
    before: dict = getattr(static, "_sglc_parts", {})
    kept: dict = {}
    lines: list[list[Segment]] = []
    for part, key in zip(parts, keys, strict=True):
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
    kind = type(value)
    if kind is Text:  # most of what is recorded, cells included: read directly
        return _text_record(value)
    if isinstance(value, (list, tuple)):
        records = []
        for item in value:
            record = frozen(item)
            if record is None and item is not None:
                return None
            records.append(record)
        return (kind.__name__, *records)
    if not isinstance(value, (Text, Table, Column, Row)):
        return None
    record = [kind.__name__]
    for name, item in _attributes(value):
        item_record = frozen(item)
        if item_record is None and item is not None:
            return None
        record.append((name, item_record))
    return tuple(record)


def _text_record(text: Text) -> tuple | None:
    """All a Text draws: its characters, its styles and spans, how it is laid out."""
    styles = (text.style, *(span.style for span in text.spans))
    if not all(isinstance(style, (str, Style)) for style in styles):
        return None
    return (
        "Text",
        text.plain,
        tuple(text.spans),
        text.style,
        text.justify,
        text.overflow,
        text.no_wrap,
        text.end,
        text.tab_size,
    )


@cache
def _slot_names(kind: type) -> frozenset[str]:
    """The slot names of KIND's MRO (once per class: the panes record parts every second)."""
    return frozenset(name for klass in kind.__mro__ for name in getattr(klass, "__slots__", ()))


def _attributes(value) -> list[tuple[str, object]]:
    """Every attribute of VALUE (slots and __dict__), by name."""
    found = dict(getattr(value, "__dict__", {}))
    for name in _slot_names(type(value)):
        found[name] = getattr(value, name, None)
    return sorted(found.items(), key=itemgetter(0))
