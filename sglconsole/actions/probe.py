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
from dataclasses import dataclass, replace

import httpx

from sglconsole.actions.base import ActionContext, ActionResult, Stage
from sglconsole.config import Profile
from sglconsole.core import degeneracy
from sglconsole.core.probe_result import ProbeResult
from sglconsole.remote.endpoint import Endpoint, forward_text
from sglconsole.remote.inspect import snapshot
from sglconsole.remote.load_reader import load_of
from sglconsole.state.status import per_request_baseline

THROUGHPUT_PROMPT = (
    "Write a Python module with small, well-named functions for parsing and summing numbers."
)
THROUGHPUT_TOKENS = 512
"""At most; the measurement stops as soon as its estimate is steady (see `steady`)."""
STEADY_MIN_TOKENS = 48
STEADY_MIN_S = 1.0
STEADY_TOLERANCE = 0.05


@dataclass
class Generation:
    text: str
    ttft_s: float | None
    tok_s: float | None
    completion_tokens: int
    accept_len: float | None
    e2e_s: float


class ProbeError(Exception):
    def __init__(self, message: str, status: int | None = None):
        super().__init__(message)
        self.status = status


def steady(marks: list[tuple[float, int]]) -> bool:
    """Whether a decode rate measured from (time, tokens so far) marks has settled: enough tokens
    and time, and the rate of the second half of the span within 5% of the first half's."""
    (start, start_tokens), (end, end_tokens) = marks[0], marks[-1]
    if end_tokens - start_tokens < STEADY_MIN_TOKENS or end - start < STEADY_MIN_S:
        return False
    middle = start + (end - start) / 2
    halfway, halfway_tokens = next((when, tokens) for when, tokens in marks if when >= middle)
    if halfway <= start or end <= halfway:
        return False
    first, second = (
        (halfway_tokens - start_tokens) / (halfway - start),
        (end_tokens - halfway_tokens) / (end - halfway),
    )
    return abs(second - first) <= STEADY_TOLERANCE * max(first, second)


async def generate(
    endpoint: Endpoint,
    prompt: str,
    max_tokens: int,
    timeout: float = 120,
    until_steady: bool = False,
) -> Generation:
    body = {
        "text": prompt,
        "sampling_params": {"max_new_tokens": max_tokens, "temperature": 0},
        "stream": True,
    }
    started = time.monotonic()
    first = None
    last: dict = {}
    marks: list[tuple[float, int]] = []  # (when, completion tokens so far), for until_steady
    async with endpoint.client(timeout=httpx.Timeout(timeout, connect=10)) as client:
        try:
            async with client.stream("POST", "/generate", json=body) as response:
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
                    tokens_so_far = (chunk.get("meta_info") or {}).get("completion_tokens")
                    if until_steady and first is not None and tokens_so_far:
                        marks.append((time.monotonic(), int(tokens_so_far)))
                        if steady(marks):
                            break  # closing the stream aborts the request on the server
        except (httpx.ConnectError, httpx.ReadError, httpx.RemoteProtocolError) as exc:
            raise ProbeError(
                "no HTTP answer through the SSH forward (is the server listening?): "
                f"{type(exc).__name__} {exc}".strip()
            ) from None
        except httpx.HTTPError as exc:
            raise ProbeError(f"{type(exc).__name__}: {exc}") from None
    ended = time.monotonic()
    meta = last.get("meta_info") or {}
    tokens = int(meta.get("completion_tokens") or 0)
    decode_time = ended - first if first is not None else None
    tok_s = (tokens - 1) / decode_time if decode_time and tokens > 1 else None
    if len(marks) >= 2 and marks[-1][0] > marks[0][0]:  # from the marks: no first-chunk skew
        tok_s = (marks[-1][1] - marks[0][1]) / (marks[-1][0] - marks[0][0])
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


async def concurrency(endpoint: Endpoint) -> int:
    """Requests already running on the server (to compare tok/s at the right concurrency); not
    known: compared as if it ran alone."""
    answer = await load_of(endpoint)
    return answer.load.in_flight if answer.load is not None else 0


def answer_verdict(answer: Generation, expect: str | None) -> tuple[str, str] | None:
    """('DEGENERATE' | 'WRONG', why, with the expected answer next to the one given), or None."""
    verdict = degeneracy.check(answer.text)
    given = f"expected {expect!r}, got {answer.text.strip()[:80]!r}" if expect else ""
    if verdict.degenerate:
        return "DEGENERATE", "; ".join(filter(None, (verdict.reason, given)))
    if expect and expect.strip().lower() not in answer.text.strip().lower():
        return "WRONG", given
    return None


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
        answer=answer.text,
        ttft_s=answer.ttft_s,
        tok_s=answer.tok_s,
        completion_tokens=answer.completion_tokens,
        accept_len=answer.accept_len,
        time=time.time(),
    )
    if throughput is not None:
        result = replace(
            result,
            throughput_tok_s=throughput.tok_s,
            accept_len=throughput.accept_len or result.accept_len,
        )
    for generation in filter(None, (answer, throughput)):
        wrong = answer_verdict(generation, expect if generation is answer else None)
        if wrong is not None:
            verdict, reason = wrong
            return replace(result, verdict=verdict, reason=reason)
    speed = result.throughput_tok_s or answer.tok_s
    expected = per_request_baseline(profile, running + 1) if profile is not None else None
    if expected and speed is not None:
        result = replace(result, expected_tok_s=expected)
        if speed < profile.baseline.slow_fraction * expected:
            reason = f"{speed:.1f} tok/s for one request, the baseline gives about {expected:.1f}"
            result = replace(result, verdict="SLOW", reason=reason)
    return result


def fail_if_judged(ctx: ActionContext, stage: Stage, verdict: ProbeResult) -> None:
    """End the step whose measurement failed the verdict (SLOW, a looping long answer) as failed:
    a step is never ticked under a FAILED summary."""
    if verdict.verdict != "OK":
        ctx.fail(stage, f"{verdict.verdict}: {verdict.reason} ({stage.detail})")


async def probe_if_running(ctx: ActionContext, host: str, port: int, **options) -> ActionResult:
    """The probe action: first whether anything runs on the port, since an HTTP error from a port
    nobody listens on would only confuse (a restore's own probe knows it just started one)."""
    target = f"{host}:{port}"
    async with ctx.stage("inspect", f"find the server on {target}") as stage:
        process = (await snapshot(ctx.ssh[host], ctx.config.host(host).python)).server(port)
        stage.detail = f"pid {process.main.pid}" if process else "not running"
    if process is None:
        return ctx.result(
            "probe", target, False, f"{target} is not running: nothing to probe (restore starts it)"
        )
    return await probe(ctx, host, port, **options)


async def probe(
    ctx: ActionContext,
    host: str,
    port: int,
    prompt: str | None = None,
    max_tokens: int | None = None,
    throughput: bool = True,
    speed: bool = True,
) -> ActionResult:
    """speed=False: the answer alone is judged (right, not looping), not its speed."""
    server = ctx.config.server(host, port)
    profile = ctx.config.profiles.get(server.profile)
    spec = profile.probe if profile else None
    prompt = prompt or (spec.prompt if spec else "What is 2+2? Answer with one number.")
    expect = spec.expect if spec and prompt == spec.prompt else None
    max_tokens = max_tokens or (spec.max_tokens if spec else 16)
    target = f"{host}:{port}"
    judged = profile if speed else None  # no profile, no baseline: SLOW is not judged
    ssh = ctx.ssh[host]
    async with ctx.stage("forward", forward_text(host, server.http_address, port)) as stage:
        base = await ssh.forward(port, server.http_address)
        stage.detail = str(base)
    try:
        async with ctx.stage("answer", prompt[:60]) as stage:
            running = await concurrency(base)
            answer = await generate(base, prompt, max_tokens)
            stage.detail = f"{answer.text.strip()[:60]!r} in {answer.e2e_s:.2f}s"
            wrong = answer_verdict(answer, expect)
            if wrong is not None:  # the operator sees the verdict first, in red, not a tick
                ctx.fail(stage, f"{wrong[0]}: {wrong[1]}")
            elif not throughput:  # the answer's own speed is what is judged: its step says so
                fail_if_judged(ctx, stage, judge(answer, None, judged, expect, running))
        long = None
        if throughput and wrong is not None:
            ctx.skip("throughput", "not measured: the answer is wrong")
        elif throughput:
            async with ctx.stage("throughput", "decode tok/s until steady") as stage:
                long = await generate(base, THROUGHPUT_PROMPT, THROUGHPUT_TOKENS, until_steady=True)
                accept = f", accept len {long.accept_len:.2f}" if long.accept_len else ""
                tokens = f" over {long.completion_tokens} tokens"
                stage.detail = f"{long.tok_s or 0:.1f} tok/s{tokens}{accept}"
                fail_if_judged(ctx, stage, judge(answer, long, judged, expect, running))
    except ProbeError as exc:
        result = ProbeResult("ERROR", str(exc), time=time.time())
        return ctx.result("probe", target, False, f"ERROR: {exc}", probe=result)
    result = judge(answer, long, judged, expect, running)
    passed = result.verdict == "OK"
    summary = f"{result.verdict}: {result.reason}"
    return ctx.result("probe", target, passed, summary, probe=result)
