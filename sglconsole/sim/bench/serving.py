"""`python -m sglang.bench_serving`, simulated: the subset of SGLang's CLI the console uses.

Like the real one it fetches the model from /v1/models, sends warm-up
requests, then every prompt at once behind a --max-concurrency semaphore
(request rate inf), streaming from /generate; it prints SGLang's result
block and appends one JSON line with SGLang's result keys to --output-file.
Its client and arithmetic are its own (bench_metrics), not the console's:
the two must agree because both are right, not because they share code.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import sys
import time

import httpx

from sglconsole.sim.bench.metrics import Outcome, metrics

DATASETS = [
    "sharegpt",
    "custom",
    "openai",
    "random",
    "random-ids",
    "generated-shared-prefix",
    "mmmu",
    "image",
    "mooncake",
]
VOCAB = 32000  # token ids drawn for random-ids prompts


def parser() -> argparse.ArgumentParser:
    cli = argparse.ArgumentParser(description="Benchmark the online serving throughput.")
    cli.add_argument(
        "--backend", default="sglang", choices=["sglang", "sglang-native", "sglang-oai", "vllm"]
    )
    cli.add_argument("--base-url", default=None)
    cli.add_argument("--host", default="0.0.0.0")
    cli.add_argument("--port", type=int)
    cli.add_argument("--dataset-name", default="sharegpt", choices=DATASETS)
    cli.add_argument("--model")
    cli.add_argument("--tokenizer")
    cli.add_argument("--num-prompts", type=int, default=1000)
    cli.add_argument("--sharegpt-output-len", type=int, default=None)
    cli.add_argument("--random-input-len", type=int, default=1024)
    cli.add_argument("--random-output-len", type=int, default=1024)
    cli.add_argument("--random-range-ratio", type=float, default=0.0)
    cli.add_argument("--request-rate", type=float, default=float("inf"))
    cli.add_argument("--max-concurrency", type=int, default=None)
    cli.add_argument("--output-file")
    cli.add_argument("--disable-tqdm", action="store_true")
    cli.add_argument("--seed", type=int, default=1)
    cli.add_argument("--warmup-requests", type=int, default=1)
    return cli


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    if args.dataset_name not in ("random", "random-ids"):
        print(
            f"the simulator only generates random datasets, not {args.dataset_name!r}",
            file=sys.stderr,
        )
        return 2
    return asyncio.run(_run(args))


def _length(rng: random.Random, full: int, ratio: float) -> int:
    low = max(1, int(full * ratio))
    return rng.randint(low, full) if low < full else full


def _requests(args: argparse.Namespace) -> list[tuple[list[int], int]]:
    """(prompt token ids, output length) per prompt, from the seed."""
    rng = random.Random(args.seed)
    out = []
    for _ in range(args.num_prompts):
        prompt_len = _length(rng, args.random_input_len, args.random_range_ratio)
        output_len = _length(rng, args.random_output_len, args.random_range_ratio)
        out.append(([rng.randrange(VOCAB) for _ in range(prompt_len)], output_len))
    return out


async def _one(http: httpx.AsyncClient, url: str, prompt: list[int], output_len: int) -> Outcome:
    """One streamed /generate request, timed like bench_serving times it (TTFT, gaps, latency)."""
    body = {
        "input_ids": prompt,
        "stream": True,
        "sampling_params": {"temperature": 0.0, "max_new_tokens": output_len, "ignore_eos": True},
    }
    outcome = Outcome(succeeded=False, prompt_len=len(prompt), started=time.perf_counter())
    last = outcome.started
    try:
        async with http.stream("POST", url, json=body) as response:
            if response.status_code != 200:
                outcome.error = f"HTTP {response.status_code}"
                return outcome
            async for line in response.aiter_lines():
                if not line.startswith("data:") or line.strip() == "data: [DONE]":
                    continue
                data = json.loads(line[5:])
                now = time.perf_counter()
                if outcome.ttft == 0.0:
                    outcome.ttft = now - outcome.started
                else:
                    outcome.itl.append(now - last)
                last = now
                outcome.output_len = int(
                    (data.get("meta_info") or {}).get("completion_tokens") or 0
                )
    except (httpx.HTTPError, ValueError) as exc:
        outcome.error = f"{type(exc).__name__}: {exc}"
        return outcome
    outcome.latency = last - outcome.started
    outcome.succeeded = outcome.ttft > 0
    return outcome


async def _run(args: argparse.Namespace) -> int:
    base = args.base_url or f"http://{args.host}:{args.port or 30000}"
    requests = _requests(args)
    slots = args.max_concurrency or len(requests) or 1
    limits = httpx.Limits(max_connections=slots + 4, max_keepalive_connections=slots + 4)
    async with httpx.AsyncClient(timeout=6 * 3600, limits=limits, trust_env=False) as http:
        print(f"benchmark_args={args}")
        if requests and args.warmup_requests:
            prompt, _ = requests[0]
            warm = await asyncio.gather(
                *(_one(http, f"{base}/generate", prompt, 32) for _ in range(args.warmup_requests))
            )
            if not any(outcome.succeeded for outcome in warm):
                print(f"Warmup failed: {warm[0].error}", file=sys.stderr)
                return 1
            print(
                f"Warmup completed with {args.warmup_requests} sequences. "
                "Starting main benchmark run..."
            )
        gate = asyncio.Semaphore(slots)

        async def limited(prompt: list[int], output_len: int) -> Outcome:
            async with gate:
                return await _one(http, f"{base}/generate", prompt, output_len)

        started = time.perf_counter()
        outcomes = await asyncio.gather(
            *(limited(tokens, output_len) for tokens, output_len in requests)
        )
        duration = time.perf_counter() - started
        server_info = await _server_info(http, base)
    accept = _accept_length(server_info)
    result = _result(args, metrics(outcomes, duration), duration, accept, server_info)
    _print(args, result, outcomes)
    if args.output_file:
        with open(args.output_file, "a", encoding="utf-8") as file:
            file.write(json.dumps(result) + "\n")
    return 0


async def _server_info(http: httpx.AsyncClient, base: str) -> dict | None:
    """/server_info, else /get_server_info (what bench_serving asked servers older than it)."""
    for path in ("/server_info", "/get_server_info"):
        try:
            response = await http.get(f"{base}{path}")
        except httpx.HTTPError:
            return None
        if response.status_code == 200:
            try:
                return response.json()
            except ValueError:
                return None
    return None


def _accept_length(info: dict | None) -> float | None:
    """internal_states[0].avg_spec_accept_length: absent (None) without speculative decoding."""
    states = (info or {}).get("internal_states") or [{}]
    return states[0].get("avg_spec_accept_length") if isinstance(states[0], dict) else None


def _result(
    args, numbers: dict, duration: float, accept: float | None, server_info: dict | None
) -> dict:
    """SGLang's result keys, in its order."""
    head = {
        "tag": None,
        "backend": args.backend,
        "dataset_name": args.dataset_name,
        "request_rate": args.request_rate,
        "max_concurrency": args.max_concurrency,
        "sharegpt_output_len": args.sharegpt_output_len,
        "random_input_len": args.random_input_len,
        "random_output_len": args.random_output_len,
        "random_range_ratio": args.random_range_ratio,
        "server_info": server_info,
        "duration": duration,
    }
    tail = {key: numbers[key] for key in ("max_output_tokens_per_s", "max_concurrent_requests")}
    body = {key: value for key, value in numbers.items() if key not in tail}
    return {**head, **body, "accept_length": accept, **tail}


def _print(args, result: dict, outcomes: list[Outcome]) -> None:
    """SGLang's result block; like SGLang, no "Accept length:" row when there is none."""
    row = "{:<40} {:<10}".format
    num = "{:<40} {:<10.2f}".format
    print("\n{s:{c}^{n}}".format(s=" Serving Benchmark Result ", n=50, c="="))
    print(row("Backend:", args.backend))
    print(row("Traffic request rate:", args.request_rate))
    print(row("Max request concurrency:", args.max_concurrency or "not set"))
    print(row("Successful requests:", result["completed"]))
    print(num("Benchmark duration (s):", result["duration"]))
    print(row("Total input tokens:", result["total_input_tokens"]))
    print(row("Total generated tokens:", result["total_output_tokens"]))
    print(num("Request throughput (req/s):", result["request_throughput"]))
    print(num("Input token throughput (tok/s):", result["input_throughput"]))
    print(num("Output token throughput (tok/s):", result["output_throughput"]))
    print(num("Total token throughput (tok/s):", result["total_throughput"]))
    print(num("Concurrency:", result["concurrency"]))
    if result["accept_length"]:
        print(num("Accept length:", result["accept_length"]))
    for title, key, label in (
        ("End-to-End Latency", "e2e_latency", "E2E Latency"),
        ("Time to First Token", "ttft", "TTFT"),
        ("Time per Output Token (excl. 1st token)", "tpot", "TPOT"),
        ("Inter-Token Latency", "itl", "ITL"),
    ):
        print("{s:{c}^{n}}".format(s=title, n=50, c="-"))
        for stat, name in (("mean", "Mean"), ("median", "Median"), ("p99", "P99")):
            print(num(f"{name} {label} (ms):", result[f"{stat}_{key}_ms"]))
    gaps = [gap for outcome in outcomes if outcome.succeeded for gap in outcome.itl]
    print(num("Max ITL (ms):", max(gaps, default=0.0) * 1000))
    print("=" * 50)


if __name__ == "__main__":
    raise SystemExit(main())
