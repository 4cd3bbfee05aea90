"""Snapshots out of a long-running ``nvidia-smi --query-gpu=... -lms N`` (pure, stdlib only)."""

from __future__ import annotations

from collections.abc import Iterable

from sglconsole.core.nvidia_smi.gpu import GPU_QUERY_FIELDS, GpuSample, parse_gpu_line

__all__ = ["GpuStreamAssembler"]


class GpuStreamAssembler:
    """Turn the lines of a long-running ``nvidia-smi --query-gpu=... -lms N`` into snapshots.

    ``nvidia-smi`` prints one line per GPU per period, GPUs in index order, with
    no separator between periods. A snapshot is complete when the index wraps
    (index <= previous index). Once one full snapshot has been seen, the next
    one is emitted as soon as its last GPU arrives (no one-period lag), which is
    what makes a 1-GPU host yield one snapshot per line. ``expected_gpus`` gives
    that count up front. Header lines are skipped; other unparseable lines are
    skipped and counted in ``garbage``.
    """

    def __init__(
        self, fields: Iterable[str] = GPU_QUERY_FIELDS, expected_gpus: int | None = None
    ) -> None:
        self.fields = tuple(fields)
        self.garbage = 0
        self.headers = 0
        self.snapshots = 0
        self._pending: list[GpuSample] = []
        self._expected = expected_gpus if expected_gpus and expected_gpus > 0 else None
        self._last_indices: tuple[int, ...] | None = None

    @property
    def pending(self) -> list[GpuSample]:
        return list(self._pending)

    def feed(self, line: str) -> list[list[GpuSample]]:
        """Feed one line; returns the snapshots it completed (usually 0 or 1)."""
        try:
            return self._feed(line)
        except Exception:  # noqa: BLE001 - fuzz-safe by contract
            self.garbage += 1
            return []

    def feed_lines(self, text: str) -> list[list[GpuSample]]:
        out: list[list[GpuSample]] = []
        if not isinstance(text, str):
            return out
        for line in text.splitlines():
            out.extend(self.feed(line))
        return out

    def flush(self) -> list[GpuSample] | None:
        """End of stream: the pending partial snapshot, if any."""
        if not self._pending:
            return None
        snap, self._pending = self._pending, []
        self.snapshots += 1
        return snap

    def _feed(self, line: str) -> list[list[GpuSample]]:
        if not isinstance(line, str):
            self.garbage += 1
            return []
        stripped = line.strip()
        if not stripped:
            return []
        sample = parse_gpu_line(stripped, self.fields)
        if sample is None:
            if stripped.startswith(self.fields[0] + ",") or stripped == self.fields[0]:
                self.headers += 1
            else:
                self.garbage += 1
            return []
        out: list[list[GpuSample]] = []
        if self._pending and sample.index <= self._pending[-1].index:
            out.append(self._emit())
        self._pending.append(sample)
        if self._complete():
            out.append(self._emit())
        return out

    def _complete(self) -> bool:
        if self._expected is not None:
            return len(self._pending) >= self._expected
        if self._last_indices is None:
            return False
        return tuple(sample.index for sample in self._pending) == self._last_indices

    def _emit(self) -> list[GpuSample]:
        snap, self._pending = self._pending, []
        self._last_indices = tuple(sample.index for sample in snap)
        self.snapshots += 1
        return snap
