"""`python -m sglang.bench_serving`, simulated: the subset of SGLang's CLI the console uses.

Like the real one it fetches the model from /v1/models, sends one warm-up
request, then every prompt at once behind a --max-concurrency semaphore
(request rate inf), prints its result block and appends one JSON line with
SGLang's field names to --output-file. The requests themselves are made by
the console's generator (console.bench.loadgen): same wire format.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import sys
import time

import httpx

from sglconsole.bench import loadgen, stats
from sglconsole.bench.model import RequestRecord
from sglconsole.bench.prompts import token_ids

DATASETS = ["sharegpt", "custom", "openai", "random", "random-ids", "generated-shared-prefix", "mmmu", "image", "mooncake"]


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(description="Benchmark the online serving throughput.")
    p.add_argument("--backend", default="sglang", choices=["sglang", "sglang-native", "sglang-oai", "vllm"])
    p.add_argument("--base-url", default=None)
    p.add_argument("--host", default="0.0.0.0")
    p.add_argument("--port", type=int)
    p.add_argument("--dataset-name", default="sharegpt", choices=DATASETS)
    p.add_argument("--model")
    p.add_argument("--tokenizer")
    p.add_argument("--num-prompts", type=int, default=1000)
    p.add_argument("--random-input-len", type=int, default=1024)
    p.add_argument("--random-output-len", type=int, default=1024)
    p.add_argument("--random-range-ratio", type=float, default=0.0)
    p.add_argument("--request-rate", type=float, default=float("inf"))
    p.add_argument("--max-concurrency", type=int, default=None)
    p.add_argument("--output-file")
    p.add_argument("--disable-tqdm", action="store_true")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--warmup-requests", type=int, default=1)
    return p


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    if args.dataset_name not in ("random", "random-ids"):
        print(f"the simulator only generates random datasets, not {args.dataset_name!r}", file=sys.stderr)
        return 2
    return asyncio.run(_run(args))


def _lengths(args: argparse.Namespace, rng: random.Random, full: int) -> int:
    low = max(1, int(full * args.random_range_ratio))
    return rng.randint(low, full) if low < full else full


def _bodies(args: argparse.Namespace) -> list[dict]:
    rng = random.Random(args.seed)
    bodies = []
    for _ in range(args.num_prompts):
        params = {"max_new_tokens": _lengths(args, rng, args.random_output_len), "temperature": 0.0, "ignore_eos": True}
        bodies.append({"input_ids": token_ids(rng, _lengths(args, rng, args.random_input_len)),
                       "sampling_params": params, "stream": True})
    return bodies


async def _run(args: argparse.Namespace) -> int:
    base = args.base_url or f"http://{args.host}:{args.port or 30000}"
    bodies = _bodies(args)
    slots = args.max_concurrency or len(bodies)
    async with loadgen.client(slots) as http:
        model = await _model(http, base)
        print(f"benchmark_args={args}")
        warm = {**bodies[0], "sampling_params": {**bodies[0]["sampling_params"], "max_new_tokens": 32}}
        outputs = await asyncio.gather(*(loadgen.stream_one(http, f"{base}/generate", warm) for _ in range(args.warmup_requests)))
        if args.warmup_requests and not any(o.ok for o in outputs):
            print(f"Warmup failed: {outputs[0].error}", file=sys.stderr)
            return 1
        print(f"Warmup completed with {args.warmup_requests} sequences. Starting main benchmark run...")
        records, started, ended = await loadgen.run_level(http, f"{base}/generate", bodies, slots)
        accept = await _accept_length(http, base)
    result = _result(args, records, started, ended, accept, model)
    _print(result)
    if args.output_file:
        with open(args.output_file, "a", encoding="utf-8") as fh:
            fh.write(json.dumps(result) + "\n")
    return 0


async def _model(http: httpx.AsyncClient, base: str) -> str | None:
    try:
        data = (await http.get(f"{base}/v1/models")).json().get("data") or []
    except (httpx.HTTPError, ValueError):
        return None
    return data[0].get("id") if data else None


async def _accept_length(http: httpx.AsyncClient, base: str) -> float | None:
    try:
        info = (await http.get(f"{base}/get_server_info")).json()
    except (httpx.HTTPError, ValueError):
        return None
    return (info.get("internal_states") or [{}])[0].get("avg_spec_accept_length")


def _result(args, records: list[RequestRecord], started: float, ended: float, accept: float | None, model) -> dict:
    ok = [r for r in records if r.ok]
    row = stats.summarise(args.max_concurrency or 0, "sim", records, started, ended)
    tpots = [(r.done_at - r.first_at) / (r.completion_tokens - 1) for r in ok if r.first_at and r.completion_tokens > 1]
    e2e = [r.done_at - r.sent_at for r in ok]
    return {
        "backend": args.backend, "dataset_name": args.dataset_name, "request_rate": args.request_rate,
        "max_concurrency": args.max_concurrency, "random_input_len": args.random_input_len,
        "random_output_len": args.random_output_len, "random_range_ratio": args.random_range_ratio,
        "duration": row.duration_s, "completed": row.completed,
        "total_input_tokens": sum(r.prompt_tokens for r in ok), "total_output_tokens": row.output_tokens,
        "request_throughput": row.completed / row.duration_s, "output_throughput": row.output_tok_s,
        "median_e2e_latency_ms": (stats.percentile(e2e, 50) or 0) * 1000,
        "median_ttft_ms": row.ttft_p50_ms, "p99_ttft_ms": row.ttft_p99_ms,
        "median_tpot_ms": (stats.percentile(tpots, 50) or 0) * 1000, "median_itl_ms": row.itl_p50_ms,
        "p99_itl_ms": row.itl_p99_ms, "concurrency": sum(e2e) / row.duration_s, "accept_length": accept,
        "model_id": model, "seed": args.seed, "time": time.time(),
    }


def _print(result: dict) -> None:
    print("\n{s:{c}^{n}}".format(s=" Serving Benchmark Result ", n=50, c="="))
    for label, key in (("Successful requests:", "completed"), ("Benchmark duration (s):", "duration"),
                       ("Output token throughput (tok/s):", "output_throughput"), ("Median TTFT (ms):", "median_ttft_ms"),
                       ("Median ITL (ms):", "median_itl_ms"), ("Accept length:", "accept_length")):
        value = result.get(key)
        print("{:<40} {:<10}".format(label, f"{value:.2f}" if isinstance(value, float) else value))
    print("=" * 50)


if __name__ == "__main__":
    raise SystemExit(main())
