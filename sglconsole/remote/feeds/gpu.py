"""The GPU feed of one host: a long-lived `nvidia-smi --query-gpu=... -lms N` stream into its state.

A stream that ends is restarted after 5 s with nvidia-smi's own words on screen; one that goes
silent (a hung driver) is replaced by a fresh one. Apart from it, every `gpu_health_interval`, one
query of the ECC and row-remap counters (core.nvidia_smi.health) into the host's signs.
"""

from __future__ import annotations

import asyncio
import time
from collections import deque

from sglconsole.core.nvidia_smi import (
    GPU_QUERY_FIELDS,
    GpuStreamAssembler,
    classify_nvidia_smi_error,
    gpu_query_args,
)
from sglconsole.core.nvidia_smi.health import HEALTH_QUERY_FIELDS, parse_health_csv
from sglconsole.remote.feeds.host_link import HostLink
from sglconsole.state.precursors import take_health


class GpuFeed:
    def __init__(self, link: HostLink):
        self.link = link

    async def run(self) -> None:
        link = self.link
        period = link.host.gpu_interval_ms
        while True:
            stream = await link.ssh.stream(
                ["nvidia-smi", *gpu_query_args(GPU_QUERY_FIELDS, loop_ms=period)]
            )
            assembler = GpuStreamAssembler(GPU_QUERY_FIELDS)
            unreadable: deque[str] = deque(maxlen=5)  # what nvidia-smi said instead of GPU lines
            try:
                hung = await self._read(stream, assembler, unreadable, period)
                if not hung and stream.exit_status is None and not await link.ssh.still_connected():
                    raise link.lost()
                stderr = "" if hung else await stream.stderr_text()
            finally:
                await stream.close()
            if hung:
                await asyncio.sleep(5)  # a fresh stream, in case this one alone was stuck
                continue
            message = classify_nvidia_smi_error("\n".join(unreadable), stderr, stream.exit_status)
            if message is None and assembler.snapshots == 0:
                message = "nvidia-smi printed no GPU lines" + (
                    f" ({assembler.garbage} unreadable)" if assembler.garbage else ""
                )
            self._error(message or "nvidia-smi stopped")
            await asyncio.sleep(5)

    async def _read(
        self, stream, assembler: GpuStreamAssembler, unreadable: deque, period: int
    ) -> bool:
        """Lines into snapshots (the first period has no wrap to end it: a short pause does).
        True when nvidia-smi went silent (hung), False when the stream ended. Read a batch at a
        time: a sample's lines come together, and a wait per line was most of an idle host's
        GPU cost."""
        silent_after = max(5.0, 3 * period / 1000)
        batches = stream.batches()
        upcoming: asyncio.Future | None = None
        try:
            while True:
                upcoming = upcoming or asyncio.ensure_future(batches.__anext__())
                first = bool(assembler.pending) and assembler.snapshots == 0
                done, _ = await asyncio.wait({upcoming}, timeout=0.3 if first else silent_after)
                if not done:
                    if first:
                        self._gpus(assembler.flush())
                        assembler = GpuStreamAssembler(
                            GPU_QUERY_FIELDS, expected_gpus=len(self.link.state.gpus)
                        )
                    else:
                        self._error(f"nvidia-smi has printed nothing for {silent_after:g}s (hung?)")
                        return True
                    continue
                upcoming, finished = None, upcoming
                try:
                    lines = finished.result()
                except StopAsyncIteration:
                    return False
                for line in lines:
                    garbage = assembler.garbage
                    snapshots = assembler.feed(line)
                    if assembler.garbage > garbage:
                        unreadable.append(line)
                    for snapshot in snapshots:
                        self._gpus(snapshot)
        finally:
            if upcoming is not None:
                upcoming.cancel()

    async def run_health(self) -> None:
        """ECC and row-remap counters, every gpu_health_interval (0: never asked)."""
        link = self.link
        while link.host.gpu_health_interval:
            result = await link.ssh.run(["nvidia-smi", *gpu_query_args(HEALTH_QUERY_FIELDS)])
            readings = parse_health_csv(result.stdout) if result.ok else []
            signs = link.state.signs
            if readings:
                take_health(link.state, readings, time.time())
            else:
                words = (result.stderr or result.stdout).strip().splitlines()
                signs.health_error = words[-1] if words else f"exited {result.exit_status}"
            link.publish()
            await asyncio.sleep(link.host.gpu_health_interval)

    def _gpus(self, snapshot) -> None:
        state = self.link.state
        state.gpus = snapshot
        state.gpu_time = time.time()
        state.gpu_error = None
        self.link.publish()

    def _error(self, message: str) -> None:
        if self.link.state.gpu_error != message:
            self.link.state.gpu_error = message
            self.link.publish()
