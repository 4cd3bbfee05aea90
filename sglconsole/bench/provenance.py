"""What a sweep ran against: the process, its SGLang version and its GPUs.

The numbers are only worth keeping next to the hardware and build that
produced them, so this is read from the host at the time of the sweep.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

from sglconsole.actions.base import ActionContext, StageFailed
from sglconsole.bench.model import Provenance, SweepSettings
from sglconsole.bench.prompts import PROMPT_KIND
from sglconsole.core.nvidia_smi import GpuSample
from sglconsole.remote.inspect import server_info, snapshot


@dataclass(frozen=True)
class ServerFacts:
    pid: int
    argv: list[str]
    python: str
    """The server's own interpreter: the one whose SGLang has bench_serving."""
    address: str
    log: str | None
    gpus: list[int]
    gpu_model: str | None
    gpu_mem_mib: list[int]
    version: str | None
    max_running: int | None
    tokenizer: str | None
    """Where the server loads its tokenizer: bench_serving needs it for its random-ids prompts."""
    model: str | None = None
    """The served model's path (or hub id): its config.json says the vocabulary."""
    cwd: str | None = None
    env: dict[str, str] = field(default_factory=dict)


def local_address(address: str) -> str:
    # a server bound to every interface is reached on loopback from its own host
    return "127.0.0.1" if address in ("0.0.0.0", "::", "") else address


def gpu_facts(samples: list[GpuSample], gpus: list[int]) -> tuple[str | None, list[int]]:
    used = [sample for sample in samples if sample.index in gpus] or samples[: len(gpus)]
    model = used[0].name if used else None
    return model, [sample.mem_used_mib for sample in used if sample.mem_used_mib is not None]


async def inspect_server(ctx: ActionContext, host: str, port: int) -> ServerFacts:
    server = ctx.config.server(host, port)
    ssh = ctx.ssh[host]
    snap = await snapshot(ssh, ctx.config.host(host).python)
    process = snap.server(port)
    if process is None:
        raise StageFailed(
            f"nothing runs on {host}:{port} (start it first: sglconsole relaunch {host}:{port})"
        )
    gpus = list(process.gpus) or list(server.gpus)
    model, memory = gpu_facts(snap.gpus, gpus)
    info = await server_info(ssh, server.http_address, port) or {}
    profile = ctx.config.profiles.get(server.profile)
    return ServerFacts(
        pid=process.main.pid,
        argv=list(process.main.argv),
        python=process.python or (profile.python if profile else "python3"),
        address=server.http_address,
        log=server.log or process.main.stdout,
        gpus=gpus,
        gpu_model=model,
        gpu_mem_mib=memory,
        version=info.get("version"),
        max_running=_int(info.get("max_running_requests")),
        tokenizer=info.get("tokenizer_path") or info.get("model_path"),
        model=info.get("model_path") or _model_in(process.main.argv),
        cwd=process.main.cwd,
        env=dict(process.main.env or {}),
    )


def _model_in(argv) -> str | None:
    """--model-path from the argv (when /server_info did not answer)."""
    for index, arg in enumerate(argv):
        name, _, value = arg.partition("=")
        if name in ("--model-path", "--model"):
            return value or (argv[index + 1] if index + 1 < len(argv) else None)
    return None


def _int(value) -> int | None:
    try:
        return int(value)
    except (TypeError, ValueError, OverflowError):  # /server_info JSON may say Infinity
        return None


def make(
    host: str,
    port: int,
    facts: ServerFacts,
    settings: SweepSettings,
    engine: str,
    profile: str | None,
    now: float | None = None,
    prompts: str = PROMPT_KIND,
) -> Provenance:
    return Provenance(
        host=host,
        port=port,
        measured_at=time.strftime("%Y-%m-%dT%H:%M:%S%z", time.localtime(now)),
        sglang_version=facts.version,
        gpu_model=facts.gpu_model,
        gpu_count=len(facts.gpus) or None,
        profile=profile,
        pid=facts.pid,
        argv=facts.argv,
        engine=engine,
        prompts=prompts,
        sampling_params=settings.sampling_params(),
        input_len=settings.input_len,
        output_len=settings.output_len,
        seed=settings.seed,
        warmup=settings.warmup,
    )
