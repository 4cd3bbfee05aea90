"""Probe: ask the server something with a known answer, and time a longer answer.

Through an SSH port forward, stream `/generate` and measure time to first
token, decode tok/s, completion tokens and accept length (meta_info's
spec_accept_length / spec_verify_ct). The answer is checked: the profile's
`expect` must appear, and the degeneracy detector must not fire. Verdicts:
OK, WRONG, DEGENERATE, SLOW (under the baseline), ERROR (HTTP status/body).
"""

from __future__ import annotations

import json
import time
from dataclasses import asdict, dataclass

import httpx

from sglconsole.actions.base import ActionContext, ActionResult
from sglconsole.config import Profile
from sglconsole.core import degeneracy
from sglconsole.state.status import per_request_baseline

THROUGHPUT_PROMPT = (
    "Write a Python module with small, well-named functions for parsing and summing numbers."
)
THROUGHPUT_TOKENS = 512


@dataclass
class Generation:
    text: str
    ttft_s: float | None
    tok_s: float | None
    completion_tokens: int
    accept_len: float | None
    e2e_s: float


@dataclass
class ProbeResult:
    verdict: str
    reason: str
    answer: str = ""
    ttft_s: float | None = None
    tok_s: float | None = None
    completion_tokens: int = 0
    accept_len: float | None = None
    throughput_tok_s: float | None = None
    expected_tok_s: float | None = None
    pid: int | None = None
    time: float = 0.0

    def to_dict(self) -> dict:
        return asdict(self)


class ProbeError(Exception):
    def __init__(self, message: str, status: int | None = None):
        super().__init__(message)
        self.status = status


async def generate(base_url: str, prompt: str, max_tokens: int, timeout: float = 120) -> Generation:
    body = {
        "text": prompt,
        "sampling_params": {"max_new_tokens": max_tokens, "temperature": 0},
        "stream": True,
    }
    started = time.monotonic()
    first = None
    last: dict = {}
    async with httpx.AsyncClient(
        timeout=httpx.Timeout(timeout, connect=10), trust_env=False
    ) as client:
        try:
            async with client.stream("POST", f"{base_url}/generate", json=body) as response:
                if response.status_code != 200:
                    detail = (await response.aread()).decode("utf-8", "replace")[:300]
                    raise ProbeError(f"HTTP {response.status_code}: {detail}", response.status_code)
                async for line in response.aiter_lines():
                    if not line.startswith("data:") or line.strip() == "data: [DONE]":
                        continue
                    try:
                        chunk = json.loads(line[5:])
                    except ValueError:
                        raise ProbeError(f"unexpected stream data: {line[:120]}") from None
                    if not isinstance(chunk, dict):
                        raise ProbeError(f"unexpected stream data: {line[:120]}")
                    if first is None and (chunk.get("text") or chunk.get("output_ids")):
                        first = time.monotonic()
                    last = chunk
        except (httpx.ConnectError, httpx.ReadError, httpx.RemoteProtocolError) as exc:
            raise ProbeError(
                f"no HTTP answer through the SSH forward (is the server listening?): {type(exc).__name__} {exc}".strip()
            ) from None
        except httpx.HTTPError as exc:
            raise ProbeError(f"{type(exc).__name__}: {exc}") from None
    ended = time.monotonic()
    meta = last.get("meta_info") or {}
    tokens = int(meta.get("completion_tokens") or 0)
    decode_time = ended - first if first is not None else None
    tok_s = (tokens - 1) / decode_time if decode_time and tokens > 1 else None
    accept = meta.get("spec_accept_length")
    if accept is None and meta.get("spec_verify_ct"):
        accept = tokens / float(meta["spec_verify_ct"])
    return Generation(
        str(last.get("text") or ""),
        None if first is None else first - started,
        tok_s,
        tokens,
        float(accept) if accept is not None else None,
        ended - started,
    )


async def concurrency(base_url: str) -> int:
    """Requests already running on the server (to compare tok/s at the right concurrency)."""
    try:
        async with httpx.AsyncClient(timeout=5, trust_env=False) as client:
            data = (await client.get(f"{base_url}/get_load")).json()
        rows = data if isinstance(data, list) else [data]
        return sum(int(r.get("num_reqs", 0)) for r in rows if isinstance(r, dict))
    except (httpx.HTTPError, ValueError, TypeError, AttributeError):
        return 0


def judge(
    answer: Generation,
    throughput: Generation | None,
    profile: Profile | None,
    expect: str | None,
    running: int,
) -> ProbeResult:
    result = ProbeResult(
        "OK",
        "answer and speed as expected",
        answer.text,
        answer.ttft_s,
        answer.tok_s,
        answer.completion_tokens,
        answer.accept_len,
        time=time.time(),
    )
    if throughput is not None:
        result.throughput_tok_s = throughput.tok_s
        result.accept_len = throughput.accept_len or result.accept_len
    for generation in filter(None, (answer, throughput)):
        verdict = degeneracy.check(generation.text)
        if verdict.degenerate:
            result.verdict, result.reason = "DEGENERATE", verdict.reason
            return result
    if expect and expect.strip().lower() not in answer.text.strip().lower():
        result.verdict, result.reason = (
            "WRONG",
            f"expected {expect!r} in the answer, got {answer.text.strip()[:80]!r}",
        )
        return result
    speed = result.throughput_tok_s or answer.tok_s
    expected = per_request_baseline(profile, running + 1) if profile is not None else None
    if expected and speed is not None:
        result.expected_tok_s = expected
        if speed < profile.baseline.slow_fraction * expected:
            result.verdict = "SLOW"
            result.reason = (
                f"{speed:.1f} tok/s for one request, the baseline gives about {expected:.1f}"
            )
    return result


async def probe(
    ctx: ActionContext,
    host: str,
    port: int,
    prompt: str | None = None,
    max_tokens: int | None = None,
    throughput: bool = True,
) -> ActionResult:
    server = ctx.config.server(host, port)
    profile = ctx.config.profiles.get(server.profile)
    spec = profile.probe if profile else None
    prompt = prompt or (spec.prompt if spec else "What is 2+2? Answer with one number.")
    expect = spec.expect if spec and prompt == spec.prompt else None
    max_tokens = max_tokens or (spec.max_tokens if spec else 16)
    target = f"{host}:{port}"
    ssh = ctx.ssh[host]
    async with ctx.stage(
        "forward", f"127.0.0.1 -> {server.http_address}:{port} on {host}"
    ) as stage:
        local = await ssh.forward(port, server.http_address)
        base = f"http://127.0.0.1:{local}"
        stage.detail = f"local port {local}"
    try:
        async with ctx.stage("answer", prompt[:60]) as stage:
            running = await concurrency(base)
            answer = await generate(base, prompt, max_tokens)
            stage.detail = f"{answer.text.strip()[:60]!r} in {answer.e2e_s:.2f}s"
        long = None
        if throughput:
            async with ctx.stage("throughput", f"{THROUGHPUT_TOKENS} tokens of code") as stage:
                long = await generate(base, THROUGHPUT_PROMPT, THROUGHPUT_TOKENS)
                accept = f", accept len {long.accept_len:.2f}" if long.accept_len else ""
                stage.detail = f"{long.tok_s or 0:.1f} tok/s{accept}"
    except ProbeError as exc:
        result = ProbeResult("ERROR", str(exc), time=time.time())
        return ctx.result("probe", target, False, f"ERROR: {exc}", probe=result)
    result = judge(answer, long, profile, expect, running)
    ok = result.verdict == "OK"
    summary = f"{result.verdict}: {result.reason}"
    return ctx.result("probe", target, ok, summary, probe=result)
