"""Run the host's own `python -m sglang.bench_serving` for one level, on the host.

Its numbers are the ones the SGLang community quotes, and the load never
crosses SSH. SGLang 0.5.23 moved it to sglang.benchmark.serving (the old name
is a deprecated shim), so the newest name the host has is used. Flags are
ones it has had for many releases; the `random-ids` dataset needs no
download. The result is the JSON line it appends to --output-file (a unique
temporary file, removed afterwards).
"""

from __future__ import annotations

import asyncio
import json
import uuid

from sglconsole.actions.base import StageFailed
from sglconsole.bench.model import HOST_MODULES, LevelResult, SweepSettings
from sglconsole.remote.ssh.connection import SshHost

FIND = (
    "import importlib.util, sys\n"
    "for name in sys.argv[1:]:\n"
    "    try:\n"
    "        if importlib.util.find_spec(name):\n"
    "            print(name)\n"
    "            break\n"
    "    except Exception:\n"
    "        pass\n"
)
LEVEL_TIMEOUT_S = 6 * 3600  # bench_serving's own client timeout


class HostBenchFailed(StageFailed):
    """bench_serving ran but left no result: the level failed (exit 1), not the command (exit 2)."""


async def find_module(ssh: SshHost, python: str) -> str | None:
    """The bench_serving module the host's SGLang has, or None."""
    result = await ssh.run([python, "-c", FIND, *HOST_MODULES], timeout=120)
    found = result.stdout.strip().splitlines()[-1:] if result.ok else []
    return found[0] if found and found[0] in HOST_MODULES else None


def argv(
    python: str,
    module: str,
    address: str,
    port: int,
    concurrency: int,
    count: int,
    settings: SweepSettings,
    output_file: str,
    tokenizer: str | None = None,
) -> list[str]:
    # without --tokenizer it loads one named after /v1/models' id: a --served-model-name breaks it
    return [
        python,
        "-m",
        module,
        "--backend",
        "sglang",
        "--host",
        address,
        "--port",
        str(port),
        "--dataset-name",
        "random-ids",
        "--num-prompts",
        str(count),
        "--random-input-len",
        str(settings.input_len),
        "--random-output-len",
        str(settings.output_len),
        "--random-range-ratio",
        "1.0",
        "--max-concurrency",
        str(concurrency),
        "--seed",
        str(settings.seed),
        "--output-file",
        output_file,
        "--disable-tqdm",
        *(["--tokenizer", tokenizer] if tokenizer else []),
    ]


def parse_output(text: str) -> dict | None:
    """The last JSON line that is a bench_serving result (the file is appended to, one run per
    line)."""
    for line in reversed(text.splitlines()):
        try:
            data = json.loads(line)
        except ValueError:
            continue
        if isinstance(data, dict) and "output_throughput" in data:
            return data
    return None


def level_from(concurrency: int, count: int, data: dict, module: str) -> LevelResult:
    completed = int(data.get("completed") or 0)
    tpot = data.get("median_tpot_ms")
    accept = data.get("accept_length")
    return LevelResult(
        concurrency=concurrency,
        engine=module,
        num_prompts=count,
        completed=completed,
        failed=max(0, count - completed),
        duration_s=float(data.get("duration") or 0),
        output_tok_s=float(data.get("output_throughput") or 0),
        per_request_tok_s=1000 / tpot if tpot else None,
        ttft_p50_ms=data.get("median_ttft_ms"),
        ttft_p99_ms=data.get("p99_ttft_ms"),
        itl_p50_ms=data.get("median_itl_ms"),
        itl_p99_ms=data.get("p99_itl_ms"),
        accept_len=float(accept) if accept else None,
        accept_source="server_info" if accept else None,
        input_tokens=(data.get("total_input_tokens") or 0) / completed if completed else None,
        output_tokens=int(data.get("total_output_tokens") or 0),
    )


async def run_level(
    ssh: SshHost,
    python: str,
    module: str,
    address: str,
    port: int,
    concurrency: int,
    count: int,
    settings: SweepSettings,
    tokenizer: str | None = None,
) -> LevelResult:
    output = f"/tmp/sglconsole-bench-{uuid.uuid4().hex}.jsonl"
    command = argv(python, module, address, port, concurrency, count, settings, output, tokenizer)
    try:
        result = await ssh.run(command, timeout=LEVEL_TIMEOUT_S)
        written = await ssh.run(["cat", output], timeout=30)
    except asyncio.CancelledError:
        # closing the channel does not stop it: the run would keep loading the server
        await ssh.run(["pkill", "-f", output], timeout=15)
        raise
    finally:
        await ssh.run(["rm", "-f", output], timeout=15)
    data = parse_output(written.stdout) if written.ok else None
    if data is None:
        tail = (result.stderr or result.stdout).strip().splitlines()[-3:]
        raise HostBenchFailed(
            f"{module} (exit {result.exit_status}) wrote no result: {' | '.join(tail)}"
        )
    return level_from(concurrency, count, data, module)
