"""The canary's questions asked of one endpoint (a server through its SSH forward, or a router):
each prompt of core.canary in turn, greedy and streamed, its answer judged (remote.feeds.canary
and remote.router.feed both ask this way)."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Callable

import httpx

from sglconsole.core import canary
from sglconsole.core.canary import CanaryAnswer, CanaryPrompt
from sglconsole.remote.endpoint import Endpoint

CONNECT_S = 10.0


async def ask_all(
    endpoint: Endpoint,
    timeout: float,
    on_answer: Callable[[CanaryAnswer], None] = lambda answer: None,
) -> list[CanaryAnswer]:
    """Each prompt in turn; after one that does not answer, the rest are not sent. `on_answer`:
    called with each as it comes (the server counted its tokens then, not at the run's end)."""
    answers = []
    async with endpoint.client(timeout=httpx.Timeout(timeout, connect=CONNECT_S)) as client:
        for prompt in canary.PROMPTS:
            answer = await ask(client, prompt, timeout)
            on_answer(answer)
            answers.append(answer)
            if answer.verdict in ("TIMEOUT", "ERROR"):
                break
    return answers


async def ask(client: httpx.AsyncClient, prompt: CanaryPrompt, timeout: float) -> CanaryAnswer:
    """One greedy answer, streamed: its text, time to first token and decode tok/s."""
    body = {
        "text": prompt.text,
        "sampling_params": {"max_new_tokens": canary.MAX_TOKENS, "temperature": 0},
        "stream": True,
    }
    started = time.monotonic()
    first: float | None = None
    last: dict = {}
    try:
        async with asyncio.timeout(timeout):
            async with client.stream("POST", "/generate", json=body) as response:
                if response.status_code != 200:
                    return _failed(prompt, "ERROR", f"HTTP {response.status_code}")
                async for line in response.aiter_lines():
                    if not line.startswith("data:") or line.strip() == "data: [DONE]":
                        continue
                    try:
                        chunk = json.loads(line[5:])
                    except ValueError:
                        return _failed(prompt, "ERROR", f"unreadable stream data: {line[:80]!r}")
                    if isinstance(chunk, dict):
                        first = first if first is not None else time.monotonic()
                        last = chunk
    except (TimeoutError, httpx.TimeoutException):
        return _failed(prompt, "TIMEOUT", f"no answer in {timeout:g} s")
    except httpx.HTTPError as exc:
        return _failed(prompt, "ERROR", f"{type(exc).__name__}: {exc}".strip())
    text = last.get("text")
    if not isinstance(text, str):
        return _failed(prompt, "ERROR", "the stream carried no text")
    ended = time.monotonic()
    tokens = (last.get("meta_info") or {}).get("completion_tokens")
    decode_s = ended - first if first is not None else 0.0
    tok_s = (tokens - 1) / decode_s if isinstance(tokens, int) and tokens > 1 and decode_s else None
    verdict, reason = canary.judge(prompt, text)
    return CanaryAnswer(
        prompt=prompt.name,
        expected=prompt.expect,
        verdict=verdict,
        reason=reason,
        answer=text,
        digest=canary.digest(text),
        ttft_s=None if first is None else first - started,
        tok_s=tok_s,
        tokens=tokens if isinstance(tokens, int) else None,
    )


def _failed(prompt: CanaryPrompt, verdict: str, reason: str) -> CanaryAnswer:
    return CanaryAnswer(prompt=prompt.name, expected=prompt.expect, verdict=verdict, reason=reason)
