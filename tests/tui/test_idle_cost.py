"""What an idle console draws again, and what it does not: ages in the unit they are shown in,
and a pane part that reads as before keeps its lines (bench/idle_cost.py measures the CPU)."""

from __future__ import annotations

from rich.console import Console, Group
from rich.table import Table
from rich.text import Text

from sglconsole.tui.paint.labels import uptime
from sglconsole.tui.widgets.common import frozen


def test_uptime_to_the_second_in_its_first_minute_then_in_whole_minutes_never_ahead():
    assert [uptime(s) for s in (None, 0, 45.9, 59.9)] == ["-", "0m00s", "0m45s", "0m59s"]
    assert [uptime(s) for s in (60, 61, 12 * 60 + 59, 3599.9)] == ["1m", "1m", "12m", "59m"]
    assert [uptime(s) for s in (3600, 3900, 86400 * 2 + 3 * 3600)] == ["1h00m", "1h05m", "2d03h"]


def table(*cells) -> Table:
    drawn = Table(box=None)
    drawn.add_column("port", justify="right")
    drawn.add_column("why")
    drawn.add_row(*cells)
    return drawn


def test_a_part_is_known_by_all_it_draws_and_anything_else_is_never_cached():
    assert frozen(table("30000", Text("up", style="green"))) == frozen(
        table("30000", Text("up", style="green"))
    )
    assert frozen(table("30000", Text("up", style="green"))) != frozen(
        table("30000", Text("up", style="red"))
    )
    assert frozen(table("30000", "a")) != frozen(table("30001", "a"))
    assert frozen(Text("x", style="bold")) != frozen(Text("x"))
    # a Text is known by its characters, styles, spans and layout: any of them differing is news
    styled = Text.assemble(("GPU", "bold"), " 0")
    assert frozen(styled) == frozen(Text.assemble(("GPU", "bold"), " 0"))
    assert frozen(styled) != frozen(Text.assemble(("GPU", "italic"), " 0"))
    assert frozen(styled) != frozen(Text.assemble(("GP", "bold"), "U 0"))  # same characters
    assert frozen(Text("x", justify="right")) != frozen(Text("x"))
    assert frozen(Text("x", end="")) != frozen(Text("x"))
    assert frozen(Text("x", overflow="ellipsis")) != frozen(Text("x"))
    assert frozen(table("30000", styled)) != frozen(table("30000", Text("GPU 0")))
    assert frozen(Group(Text("x"))) is None  # not a Text or a Table: drawn every time
    assert frozen(table("30000", Group(Text("x")))) is None


def test_a_group_drawn_part_by_part_is_the_group_drawn_whole():
    console = Console(width=60)
    options = console.options.update_width(60)
    parts = [Text("h200x4", style="bold"), Text("\nGPUs", style="underline"), table("1", "x")]
    whole = console.render_lines(Group(*parts), options, pad=False)
    by_part = [line for part in parts for line in console.render_lines(part, options, pad=False)]
    assert whole == by_part


def laid(width: int, *rows: tuple[str, ...]) -> list[str]:
    from sglconsole.tui.paint.gpus import lay_out

    cells = [[Text(cell) for cell in row] for row in rows]
    lines = lay_out(cells, ["right", "right", "left"], ["bold"] + [""] * (len(rows) - 1), width)
    return [line.plain.rstrip() for line in lines]


def test_the_gpu_table_is_laid_out_as_rich_lays_out_its_table_a_line_each():
    rows = [("GPU", "util", "held by"), ("0", "70%", ":30000"), ("1", "0%", "free")]
    drawn = Table(box=None, pad_edge=False, show_edge=False, expand=False)
    for column, justify in (("GPU", "right"), ("util", "right"), ("held by", "left")):
        drawn.add_column(column, justify=justify)
    for row in rows[1:]:
        drawn.add_row(*row)
    console = Console(width=80)
    rich_lines = [
        "".join(segment.text for segment in line).rstrip()
        for line in console.render_lines(drawn, console.options, pad=False)
    ]
    assert (
        laid(80, *rows)
        == rich_lines
        == ["GPU  util  held by", "  0   70%  :30000", "  1    0%  free"]
    )
    # short of room: the last column goes before a number is cut, then a header is cut
    assert laid(12, *rows) == ["GPU  util", "  0   70%", "  1    0%"]
    assert laid(8, *rows) == ["GPU  ut…", "  0  70%", "  1   0%"]


def test_a_new_gpu_sample_changes_the_line_of_the_gpu_whose_numbers_moved_alone():
    before = laid(80, ("GPU", "util", "held by"), ("0", "70%", ":30000"), ("1", "0%", "free"))
    after = laid(80, ("GPU", "util", "held by"), ("0", "71%", ":30000"), ("1", "0%", "free"))
    assert [one == two for one, two in zip(before, after, strict=True)] == [True, False, True]
