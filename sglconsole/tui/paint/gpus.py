"""The GPUs of a host: utilisation, memory with a bar, temperature, power, and who holds each."""

from __future__ import annotations

from rich.table import Table
from rich.text import Text

from sglconsole.core.nvidia_smi import GpuSample
from sglconsole.core.text import clean, fmt_num
from sglconsole.state.fleet import HostState, gpu_holders
from sglconsole.tui.paint.labels import gpu_model
from sglconsole.tui.paint.palette import Palette
from sglconsole.tui.paint.spark import bar

HOT_C = 83
WIDE = 70  # below this many cells: no model name, no power column, a shorter bar


def gpu_table(
    host: HostState, palette: Palette, width: int, mine: tuple[int, ...] = ()
) -> Table | Text:
    if host.reachable is False and host.gpus:  # the last sample read is not now: no numbers
        return Text(
            f"no GPU numbers while UNREACHABLE ({len(host.gpus)} GPUs when last seen)",
            style=palette.muted,
        )
    if not host.gpus:
        return Text(
            f"nvidia-smi: {clean(host.gpu_error)}" if host.gpu_error else "no GPU sample yet",
            style=palette.muted,
        )
    wide = width >= WIDE
    table = Table(box=None, pad_edge=False, show_edge=False, expand=False, header_style="bold")
    for column, justify in _columns(wide):
        table.add_column(column, justify=justify, no_wrap=column != "held by")
    holders = gpu_holders(host)
    for gpu in host.gpus:
        row = _row(gpu, holders.get(gpu.index, ""), palette, wide)
        table.add_row(*row, style="bold" if gpu.index in mine else None)
    return table


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
