"""When the simulated scheduler is wedged: a host-set stall, or flashinfer's one-time JIT build.

Real SGLang 0.5.17 on an H200 wedged its scheduler for 85-89 s when the first request that
needs flashinfer's sampling kernels arrived on a machine without a JIT cache: every request in
flight waited, no batch line was written, /health timed out, while the HTTP process kept
answering what it reads from its own memory. Two host settings (settings.py) reproduce it:
`scheduler_stall` (read live) and `jit_stall_s` (once per host: a cache marker records the
build, as flashinfer's own cache under ~/.cache/flashinfer does).
"""

from __future__ import annotations

import asyncio
import os
import time

from sglconsole.sim import settings

POLL_S = 0.4  # how often the host's scheduler_stall setting is re-read (the brief: within ~0.5 s)
SAMPLING_EPS = 1e-6  # SGLang's _SAMPLING_EPS: a temperature under it means greedy
JIT_MARKER = os.path.join(".cache", "flashinfer", "sampling", "top_k_top_p_sampling.so")


def needs_flashinfer_sampling(params: dict, backend: str | None) -> bool:
    """SGLang's Sampler: greedy (temperature < eps, or top_k == 1) is an argmax; plain temperature
    sampling is torch's multinomial; only top-p / top-k / min-p run flashinfer's kernels (when
    the sampling backend is flashinfer, 0.5.17's default)."""
    if (backend or "flashinfer") != "flashinfer":
        return False
    try:
        temperature = float(params.get("temperature", 1.0))
        top_p = float(params.get("top_p", 1.0))
        top_k = int(params.get("top_k", -1))
        min_p = float(params.get("min_p", 0.0))
    except (TypeError, ValueError):
        return False
    if 0 <= temperature < SAMPLING_EPS or top_k == 1:
        return False
    return top_p < 1.0 or top_k > 1 or min_p > 0.0


def jit_cache_dir(root: str) -> str:
    """Where flashinfer keeps its JIT cache: the server's HOME when it lies on the simulated host,
    else the host's root (never the real user's home)."""
    home = os.environ.get("HOME") or ""
    inside = home and os.path.realpath(home).startswith(os.path.realpath(root))
    return home if inside else root


class SchedulerStall:
    """Whether the scheduler is wedged now (Engine asks every tick)."""

    def __init__(self, root: str, port: int):
        self.root = root
        self.port = port
        self.host_stalled = bool(settings.server_settings(root, port).get("scheduler_stall"))
        self.jit_until: float | None = None

    @property
    def stalled(self) -> bool:
        if self.jit_until is not None and time.monotonic() >= self.jit_until:
            self._jit_done()
        return self.host_stalled or self.jit_until is not None

    async def poll(self) -> None:
        """Follow the host's `scheduler_stall` setting while the server runs."""
        while True:
            await asyncio.sleep(POLL_S)
            self.host_stalled = bool(
                settings.server_settings(self.root, self.port).get("scheduler_stall")
            )

    async def wait_unstalled(self) -> None:
        while self.stalled:
            await asyncio.sleep(0.1)

    def on_sampled_request(self) -> None:
        """A batch with a request that needs flashinfer's sampling kernels runs: on a host without
        the JIT cache, the build wedges the scheduler for `jit_stall_s`."""
        if self.jit_until is not None:
            return
        seconds = settings.server_settings(self.root, self.port).get("jit_stall_s")
        if not seconds or os.path.exists(self._marker()):
            return
        self.jit_until = time.monotonic() + float(seconds)

    def _marker(self) -> str:
        return os.path.join(jit_cache_dir(self.root), JIT_MARKER)

    def _jit_done(self) -> None:
        self.jit_until = None
        marker = self._marker()
        os.makedirs(os.path.dirname(marker), exist_ok=True)
        with open(marker, "wb"):
            pass
