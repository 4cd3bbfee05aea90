"""A GPU's memory health from ``nvidia-smi --query-gpu``: ECC error and row-remap counters (pure).

Asked apart from the 1 s stream (a slow poll: these counters move rarely, and the stream's cost
stays what it was). Volatile ECC counts reset with the driver; remapped rows persist. A value the
GPU cannot report (``[N/A]``: no ECC, or a GPU without row remapping) is None, never 0.
"""

from __future__ import annotations

from dataclasses import dataclass

from sglconsole.core.nvidia_smi.values import BadValue, split_csv, to_int, to_str

HEALTH_QUERY_FIELDS: tuple[str, ...] = (
    "index",
    "pci.bus_id",
    "ecc.errors.corrected.volatile.total",
    "ecc.errors.uncorrected.volatile.total",
    "remapped_rows.correctable",
    "remapped_rows.uncorrectable",
    "remapped_rows.pending",
    "remapped_rows.failure",
)


@dataclass(frozen=True, slots=True, kw_only=True)
class GpuHealth:
    index: int
    bus_id: str | None = None
    ecc_corrected: int | None = None
    ecc_uncorrected: int | None = None
    remapped_correctable: int | None = None
    remapped_uncorrectable: int | None = None
    remap_pending: bool | None = None
    """A remap waits for the GPU's reset: the row still errs until then."""
    remap_failure: bool | None = None
    """No spare row left: the GPU needs service."""

    def counters(self) -> dict[str, int | None]:
        return {
            "ecc_corrected": self.ecc_corrected,
            "ecc_uncorrected": self.ecc_uncorrected,
            "remapped_correctable": self.remapped_correctable,
            "remapped_uncorrectable": self.remapped_uncorrectable,
        }


def _yes_no(value: str) -> bool | None:
    text = to_str(value)
    if text is None:
        return None
    lowered = text.strip().lower()
    if lowered in ("yes", "1", "true"):
        return True
    if lowered in ("no", "0", "false"):
        return False
    raise BadValue(value)


def parse_health_csv(text: str) -> list[GpuHealth]:
    """``--query-gpu=HEALTH_QUERY_FIELDS --format=csv,noheader,nounits`` output; junk is skipped."""
    found = []
    for line in text.splitlines() if isinstance(text, str) else ():
        cols = split_csv(line.strip())
        if len(cols) != len(HEALTH_QUERY_FIELDS):
            continue
        try:
            index = to_int(cols[0])
            if index is None or index < 0:
                continue
            found.append(
                GpuHealth(
                    index=index,
                    bus_id=to_str(cols[1]),
                    ecc_corrected=to_int(cols[2]),
                    ecc_uncorrected=to_int(cols[3]),
                    remapped_correctable=to_int(cols[4]),
                    remapped_uncorrectable=to_int(cols[5]),
                    remap_pending=_yes_no(cols[6]),
                    remap_failure=_yes_no(cols[7]),
                )
            )
        except BadValue:
            continue
    return found
