"""The simulated scheduler: admits requests, runs decode steps, logs like SGLang.

Time advances in ticks (~50 ms) rather than per decode step so a host running
many simulated servers stays cheap; within a tick the number of steps and
tokens follows the PerfModel exactly (fractions are carried over).
"""

from __future__ import annotations

import asyncio
import itertools
import random
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field

from sglconsole.sim.server import corpus, logfmt
from sglconsole.sim.server.perf import PerfModel

TICK_S = 0.05


@dataclass
class SimRequest:
    rid: str
    prompt: str
    prompt_tokens: int
    max_new_tokens: int
    words: corpus.WordStream
    created: float = field(default_factory=time.monotonic)
    first_token_at: float | None = None
    finished_at: float | None = None
    generated: int = 0
    verify_ct: int = 0
    text: list[str] = field(default_factory=list)
    finish_reason: dict | None = None
    background: bool = False
    sampled: bool = False  # needs flashinfer's sampling kernels (stall.needs_flashinfer_sampling)
    _carry: float = 0.0
    updates: asyncio.Queue = field(default_factory=asyncio.Queue)
    done: asyncio.Event = field(default_factory=asyncio.Event)

    @property
    def output_text(self) -> str:
        return corpus.join(self.text)

    @property
    def accept_length(self) -> float:
        return self.generated / self.verify_ct if self.verify_ct else 0.0


@dataclass
class Stats:
    """What /metrics and /server_info report."""

    running: int = 0
    queued: int = 0
    token_usage: float = 0.0
    gen_throughput: float = 0.0
    accept_len: float = 0.0
    prompt_tokens_total: int = 0
    generation_tokens_total: int = 0
    requests_total: int = 0
    spec_verify_total: int = 0
    used_tokens: int = 0  # KV tokens of the running batch
    waiting_tokens: int = 0  # prompt tokens of the queued requests


class Engine:
    def __init__(
        self,
        perf: PerfModel,
        *,
        max_running: int,
        max_total_tokens: int,
        decode_log_interval: int,
        log: Callable[[str], None],
        degenerate: bool = False,
        seed: int = 0,
        hybrid: str | None = None,
        prefix: str = "TP0",
        mfu: bool = False,
        tick_s: float = TICK_S,
        log_fields: dict[str, list[dict]] | None = None,
        prefill_cuda_graph: bool = False,
        prefill_graph_tokens: tuple[int, int] | None = None,
        stall=None,
    ):
        self.perf = perf
        self.log_fields = log_fields or {}  # the version's batch-line layouts (versiontable)
        self.prefill_cuda_graph = prefill_cuda_graph  # piecewise CUDA graphs run prefill when on
        # 0.5.17's prefill CUDA graph: captured for num_tokens in [low, high]; outside it, eager
        self.prefill_graph_tokens = prefill_graph_tokens
        self.stall = stall  # stall.SchedulerStall: while wedged, nothing advances or logs
        # when the tokenizer last heard from the scheduler (SGLang's last_receive_tstamp, wall
        # clock): what /health compares with its start
        self.last_output = time.time()
        self.max_running = max_running
        self.max_total_tokens = max_total_tokens
        self.decode_log_interval = max(1, decode_log_interval)
        self.log = log
        self.degenerate = degenerate
        self.hybrid = hybrid
        self.prefix = prefix
        self.mfu = mfu
        self.tick_s = tick_s
        self.random = random.Random(seed)
        self.running: list[SimRequest] = []
        self.waiting: deque[SimRequest] = deque()
        self.stats = Stats()
        self._wake = asyncio.Event()
        self._ids = itertools.count(1)
        self._steps = 0.0
        self._steps_logged = 0
        self._tokens_since_log = 0
        self._verify_since_log = 0
        self._last_log = time.monotonic()

    # --------------------------------------------------------------- requests

    def new_request(
        self, prompt: str, max_new_tokens: int, background: bool = False, sampled: bool = False
    ) -> SimRequest:
        rid = f"{next(self._ids):032x}"
        words = (
            corpus.degenerate_stream(prompt)
            if self.degenerate
            else corpus.answer_stream(prompt, self.random)
        )
        request = SimRequest(
            rid,
            prompt,
            corpus.count_tokens(prompt),
            max(1, max_new_tokens),
            words,
            background=background,
            sampled=sampled,
        )
        self.waiting.append(request)
        self._wake.set()
        return request

    def abort(self, request: SimRequest) -> None:
        """The client went away before the end (a probe closes its stream once steady): SGLang
        aborts the request, so it generates nothing more and leaves the batch at once. Without
        this, a closed probe kept the server's batch (and its logged tok/s) up for many seconds."""
        if request.finished_at is not None:
            return
        if request in self.waiting:
            self.waiting.remove(request)
        if request in self.running:
            self.running.remove(request)
        request.finished_at = time.monotonic()
        request.finish_reason = {"type": "abort", "message": "client disconnected"}
        request.done.set()
        if not self.running:
            self.stats.gen_throughput = 0.0  # an idle scheduler reports 0, as in _advance
        self._publish_stats()

    # ------------------------------------------------------------------- loop

    async def run(self) -> None:
        last = time.monotonic()
        while True:
            if not self.running and not self.waiting:
                self._wake.clear()
                await self._wake.wait()
                last = time.monotonic()
            if self.stall is not None and self.stall.stalled:
                await asyncio.sleep(self.tick_s)  # wedged: no step, no line, no catching up after
                last = time.monotonic()
                continue
            self._admit()
            await asyncio.sleep(self.tick_s)
            now = time.monotonic()
            if self.stall is not None and self.stall.stalled:
                last = now
                continue
            self._advance(now - last, now)
            last = now

    def _admit(self) -> None:
        admitted = []
        while self.waiting and len(self.running) < self.max_running:
            request = self.waiting.popleft()
            self.running.append(request)
            admitted.append(request)
        if admitted:
            new_tokens = sum(request.prompt_tokens for request in admitted)
            self.stats.prompt_tokens_total += new_tokens
            self.log(
                logfmt.prefill_line(
                    fields=self.log_fields.get("prefill"),
                    cuda_graph=self._prefill_graph(new_tokens),
                    new_seq=len(admitted),
                    new_token=new_tokens,
                    cached_token=0,
                    token_usage=self._usage(),
                    running_req=len(self.running) - len(admitted),
                    queue_req=len(self.waiting),
                    input_throughput=new_tokens
                    / max(self.tick_s, new_tokens / self.perf.prefill_tokens_per_s),
                    hybrid=self.hybrid,
                    prefix=self.prefix,
                )
            )
        self._publish_stats()
        if self.stall is not None and any(request.sampled for request in admitted):
            self.stall.on_sampled_request()  # its first sampling step may JIT-compile first

    def _prefill_graph(self, new_tokens: int) -> bool:
        if self.prefill_graph_tokens is not None:
            low, high = self.prefill_graph_tokens
            return low <= new_tokens <= high
        return self.prefill_cuda_graph

    def _advance(self, elapsed: float, now: float) -> None:
        if not self.running:
            return
        batch = len(self.running)
        before = int(self._steps)
        self._steps += elapsed / self.perf.step_time(batch)
        steps = int(self._steps) - before
        if steps <= 0:
            return
        accept = (
            self.perf.draft_tokens
            if self.degenerate and self.perf.spec_enabled
            else self.perf.accept_len
        )
        for request in list(self.running):
            self._generate(request, steps, accept, now)
        self._maybe_log(batch, accept, now)
        self.running = [request for request in self.running if request.finished_at is None]
        if not self.running:
            self.stats.gen_throughput = 0.0  # an idle scheduler reports 0 (accept length stays)
        self._publish_stats()

    def _generate(self, request: SimRequest, steps: int, accept: float, now: float) -> None:
        noise = (
            1.0 if self.degenerate else self.random.uniform(0.97, 1.03)
        )  # a loop is accepted in full, always
        exact = steps * accept * noise + request._carry
        tokens = min(int(exact), request.max_new_tokens - request.generated)
        request._carry = exact - int(exact)
        if tokens <= 0:
            return
        new_words, stop = request.words.take(tokens)
        if stop:
            tokens = max(1, len(new_words))
        self.last_output = time.time()
        request.text.extend(new_words)
        request.generated += tokens
        request.verify_ct += max(1, round(tokens / accept)) if self.perf.spec_enabled else tokens
        self._tokens_since_log += tokens
        self._verify_since_log += steps
        self.stats.generation_tokens_total += tokens
        self.stats.spec_verify_total += steps
        if request.first_token_at is None:
            request.first_token_at = now
        finished = stop or request.generated >= request.max_new_tokens
        if finished:
            self.stats.requests_total += 1  # counted when it finishes, as SGLang's collector does
            request.finished_at = now
            reason = (
                {"type": "stop", "matched": None}
                if stop
                else {"type": "length", "length": request.max_new_tokens}
            )
            request.finish_reason = reason
        request.updates.put_nowait(new_words)
        if finished:
            request.done.set()

    def _maybe_log(self, batch: int, accept: float, now: float) -> None:
        target = (int(self._steps) // self.decode_log_interval) * self.decode_log_interval
        if target <= self._steps_logged:
            return
        self._steps_logged = target
        gap = max(now - self._last_log, 1e-6)
        throughput = self._tokens_since_log / gap
        accept_len = (
            self._tokens_since_log / self._verify_since_log if self._verify_since_log else 1.0
        )
        self.stats.gen_throughput = throughput
        self.stats.accept_len = accept_len if self.perf.spec_enabled else 0.0
        self.log(
            logfmt.decode_line(
                fields=self.log_fields.get("decode"),
                running_req=batch,
                token=self._kv_tokens(),
                token_usage=self._usage(),
                accept_len=accept_len if self.perf.spec_enabled else None,
                accept_rate=self._accept_rate(accept_len) if self.perf.spec_enabled else None,
                cuda_graph=self.perf.uses_cuda_graph(batch),
                gen_throughput=throughput,
                queue_req=len(self.waiting),
                hybrid=self.hybrid,
                prefix=self.prefix,
                mfu=(12.5 * batch, 3000.0 / (1 + 0.05 * batch), 40.0) if self.mfu else None,
            )
        )
        self._last_log = now
        self._tokens_since_log = 0
        self._verify_since_log = 0

    def _accept_rate(self, accept_len: float) -> float:
        if self.perf.draft_tokens <= 1:
            return 0.0
        return max(0.0, min(1.0, (accept_len - 1) / (self.perf.draft_tokens - 1)))

    def _kv_tokens(self) -> int:
        return sum(request.prompt_tokens + request.generated for request in self.running)

    def waiting_tokens(self) -> int:
        """Prompt tokens of the queued requests (what SGLang counts as pending)."""
        return sum(request.prompt_tokens for request in self.waiting)

    def _usage(self) -> float:
        return min(1.0, self._kv_tokens() / max(1, self.max_total_tokens))

    def _publish_stats(self) -> None:
        self.stats.running = len(self.running)
        self.stats.queued = len(self.waiting)
        self.stats.token_usage = self._usage()
        self.stats.used_tokens = self._kv_tokens()
        self.stats.waiting_tokens = self.waiting_tokens()
