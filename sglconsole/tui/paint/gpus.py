"""The GPUs of a host: utilisation, memory with a bar, temperature, power, and who holds each."""

from __future__ import annotations

from rich.console import Group
from rich.text import Text

from sglconsole.core.nvidia_smi import GpuSample
from sglconsole.core.text import clean, fmt_num
from sglconsole.state.fleet import HostState, gpu_holders
from sglconsole.tui.paint.labels import gpu_model
from sglconsole.tui.paint.palette import Palette
from sglconsole.tui.paint.spark import bar

HOT_C = 83
WIDE = 70  # below this many cells: no model name, no power column, a shorter bar


def gpu_table(host: HostState, palette: Palette, width: int, mine: tuple[int, ...] = ()) -> Group:
    return Group(*gpu_lines(host, palette, width, mine))


def gpu_lines(
    host: HostState, palette: Palette, width: int, mine: tuple[int, ...] = ()
) -> list[Text]:
    """The GPU table a line each (a header, then a GPU a line), laid out as a rich Table with no
    box would be: a pane keeps the lines that did not change (tui.widgets.common.show), and an
    idle GPU's new sample changes one or two. Laid out by rich's Table, the whole table was laid
    out again at every sample (1.3 ms of the 2 ms a host pane's update took)."""
    if host.reachable is False and host.gpus:  # the last sample read is not now: no numbers
        return [
            Text(
                f"no GPU numbers while UNREACHABLE ({len(host.gpus)} GPUs when last seen)",
                style=palette.muted,
            )
        ]
    if not host.gpus:
        return [
            Text(
                f"nvidia-smi: {clean(host.gpu_error)}" if host.gpu_error else "no GPU sample yet",
                style=palette.muted,
            )
        ]
    wide = width >= WIDE
    columns = _columns(wide)
    holders = gpu_holders(host)
    rows = [[Text(column) for column, _ in columns]]
    styles = ["bold"]
    for gpu in host.gpus:
        cells = _row(gpu, holders.get(gpu.index, ""), palette, wide)
        rows.append([cell if isinstance(cell, Text) else Text(cell) for cell in cells])
        styles.append("bold" if gpu.index in mine else "")
    return lay_out(rows, [justify for _, justify in columns], styles, width)


GAP = "  "  # between two columns: a rich Table's padding of one cell on either side


def lay_out(
    rows: list[list[Text]], justify: list[str], styles: list[str], width: int
) -> list[Text]:
    """ROWS (the header first) as lines: every column as wide as its widest cell, justified, GAP
    apart. Short of room, columns are left out from the right until their values fit, then a
    header is cut to its values (as rich's Table cuts it; an ellipsis says so): a number is never
    cut (a last column alone is, when nothing else fits)."""
    widths = [max(row[column].cell_len for row in rows) for column in range(len(justify))]
    values = [max(row[column].cell_len for row in rows[1:]) for column in range(len(widths))]
    while len(widths) > 1 and _across(values[: len(widths)]) > width:
        widths.pop()
    for column in reversed(range(len(widths))):  # the GPU's number last
        excess = _across(widths) - width
        if excess <= 0:
            break
        widths[column] -= min(excess, widths[column] - values[column])
    widths[-1] = max(1, min(widths[-1], width - _across(widths[:-1]) - len(GAP)))
    lines = []
    for row, style in zip(rows, styles, strict=True):
        line = Text(style=style, no_wrap=True, overflow="ellipsis")
        for column, cells in enumerate(widths):
            cell = row[column]
            if column:
                line.append(GAP)
            if cell.cell_len > cells:
                cell = cell.copy()
                cell.truncate(cells, overflow="ellipsis")
            pad = " " * (cells - cell.cell_len)
            if justify[column] == "right":
                line.append(pad)
                line.append_text(cell)
            else:
                line.append_text(cell)
                line.append(pad)
        lines.append(line)
    return lines


def _across(widths: list[int]) -> int:
    return sum(widths) + len(GAP) * (len(widths) - 1)


def _columns(wide: bool) -> list[tuple[str, str]]:
    columns = [("GPU", "right")] + ([("model", "left")] if wide else [])
    columns += [("util", "right"), ("memory", "left"), ("temp", "right")]
    return columns + ([("power", "right")] if wide else []) + [("held by", "left")]


def _row(gpu: GpuSample, holder: str, palette: Palette, wide: bool) -> list:
    row: list = [str(gpu.index)] + ([clean(gpu_model(gpu.name))] if wide else [])
    row += [
        fmt_num(gpu.util_gpu, 0, "%"),
        memory(gpu, palette, 10 if wide else 5),
        temperature(gpu, palette),
    ]
    if wide:
        row.append(
            "-"
            if gpu.power_draw_w is None
            else f"{gpu.power_draw_w:.0f}/{gpu.power_limit_w or 0:.0f}W"
        )
    row.append(Text(clean(holder)) if holder else Text("free", style=palette.muted))
    return row


def memory(gpu: GpuSample, palette: Palette, width: int) -> Text:
    total = gpu.mem_total_mib or 0
    fraction = (gpu.mem_used_mib or 0) / total if total else None
    filled, empty = bar(fraction, width)
    used = f" {(gpu.mem_used_mib or 0) / 1024:.0f}/{total / 1024:.0f}G"
    return Text.assemble((filled, palette.accent), (empty, palette.muted), used)


def temperature(gpu: GpuSample, palette: Palette) -> Text:
    hot = gpu.temperature_c is not None and gpu.temperature_c >= HOT_C
    return Text(fmt_num(gpu.temperature_c, 0, "C"), style=palette.bad if hot else "")
