"""What a benchmark sweep asks for and what it measured (plain typed data, no I/O)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict, dataclass, field

DEFAULT_LEVELS = (1, 8, 32, 128)
ENGINES = ("auto", "host", "console")
HOST_MODULES = ("sglang.benchmark.serving", "sglang.bench_serving")
"""Where SGLang keeps bench_serving: the new path (0.5.23 on) first, the old one (still a shim
there) after."""
CONSOLE_ENGINE = "sglconsole"


@dataclass(frozen=True)
class SweepSettings:
    levels: tuple[int, ...] = DEFAULT_LEVELS
    input_len: int = 256
    output_len: int = 256
    num_prompts: int | None = None
    """Measured requests per level; None: 4 per concurrency slot (at least 8)."""
    seed: int = 1
    temperature: float = 0.0
    warmup: int = 1
    """Requests sent before each level and left out of its numbers."""
    engine: str = "auto"
    """auto: the host's own sglang.bench_serving when it has one, else the console's generator."""

    def prompts_for(self, concurrency: int) -> int:
        # fewer prompts than slots would never reach the concurrency the row claims
        wanted = self.num_prompts if self.num_prompts is not None else max(4 * concurrency, 8)
        return max(wanted, concurrency)

    def sampling_params(self) -> dict:
        # ignore_eos: every request generates exactly output_len tokens, like bench_serving does
        return {
            "max_new_tokens": self.output_len,
            "temperature": self.temperature,
            "ignore_eos": True,
        }


@dataclass
class RequestRecord:
    """One streamed request as the client saw it (monotonic seconds)."""

    ok: bool
    sent_at: float
    done_at: float
    first_at: float | None = None
    prompt_tokens: int = 0
    completion_tokens: int = 0
    itl_s: list[float] = field(default_factory=list)
    """Inter-token latency, one entry per token after the first (a chunk's gap shared by its
    tokens)."""
    accept_len: float | None = None
    verify_ct: int | None = None
    error: str = ""

    @property
    def ttft_s(self) -> float | None:
        return None if self.first_at is None else self.first_at - self.sent_at

    @property
    def decode_tok_s(self) -> float | None:
        if self.first_at is None or self.completion_tokens < 2 or self.done_at <= self.first_at:
            return None
        return (self.completion_tokens - 1) / (self.done_at - self.first_at)


@dataclass
class LevelResult:
    concurrency: int
    engine: str
    num_prompts: int
    completed: int
    failed: int
    duration_s: float
    output_tok_s: float
    """Aggregate: output tokens of the measured requests / wall time from first send to last
    answer."""
    per_request_tok_s: float | None
    ttft_p50_ms: float | None
    ttft_p99_ms: float | None
    itl_p50_ms: float | None
    itl_p99_ms: float | None
    accept_len: float | None
    accept_source: str | None = None
    """meta_info, server_info or decode lines: where accept_len came from."""
    input_tokens: float | None = None
    """Mean prompt tokens the server counted (what was really measured)."""
    output_tokens: int = 0
    server_tok_s: float | None = None
    """SGLang's own decode speed during the level: the median gen throughput of its decode lines
    that count, at the level's full batch (bench.decode). What `--save-baseline` stores."""
    decode_lines: int = 0
    other_requests: int = 0
    """Requests of someone else's the server ran during the level: the more of what /get_load said
    as the level began and what its decode lines counted beyond the level's own."""
    errors: list[str] = field(default_factory=list)

    def to_dict(self) -> dict:
        return asdict(self)


@dataclass
class Provenance:
    host: str
    port: int
    measured_at: str
    sglang_version: str | None
    gpu_model: str | None
    gpu_count: int | None
    profile: str | None
    pid: int | None
    argv: list[str]
    engine: str
    prompts: str
    sampling_params: dict
    input_len: int
    output_len: int
    seed: int
    warmup: int

    def to_dict(self) -> dict:
        return asdict(self)


@dataclass
class SweepResult:
    provenance: Provenance
    levels: list[LevelResult]
    warnings: list[str] = field(default_factory=list)
    gpu_mem_mib: list[int] = field(default_factory=list)
    """Memory used on each of the server's GPUs (nvidia-smi), as it served."""

    @property
    def ok(self) -> bool:
        return bool(self.levels) and all(
            level.failed == 0 and level.completed > 0 for level in self.levels
        )

    def level(self, concurrency: int) -> LevelResult | None:
        return next((level for level in self.levels if level.concurrency == concurrency), None)

    def to_dict(self) -> dict:
        return {
            "ok": self.ok,
            "provenance": self.provenance.to_dict(),
            "levels": [level.to_dict() for level in self.levels],
            "warnings": list(self.warnings),
            "gpu_mem_mib": list(self.gpu_mem_mib),
        }


@dataclass(frozen=True)
class SweepProgress:
    """One progress report: which level, how many of its requests are done, and any finished row."""

    phase: str  # "prepare" | "warmup" | "level" | "done"
    level_index: int
    level_count: int
    concurrency: int | None
    done: int = 0
    total: int = 0
    engine: str | None = None
    profile: str | None = None
    result: LevelResult | None = None
    message: str = ""


ProgressCallback = Callable[[SweepProgress], None]


def no_progress(_: SweepProgress) -> None:
    return None
