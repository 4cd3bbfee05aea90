"""The console's own load generator: closed-loop streaming /generate requests on one asyncio client.

Used when the host has no `sglang.bench_serving`; the requests go through the
SSH port forward's private socket. It must never be the bottleneck, so per chunk it only finds
the token count with a regex (the cumulative text is not parsed) and decodes
the JSON of the last chunk alone, for meta_info.
"""

from __future__ import annotations

import asyncio
import json
import re
import time
from collections.abc import Callable, Sequence

import httpx

from sglconsole.bench.model import RequestRecord
from sglconsole.remote.endpoint import Endpoint

COMPLETION = re.compile(rb'"completion_tokens"\s*:\s*(\d+)')
DONE = b"[DONE]"


def client(endpoint: Endpoint, slots: int) -> httpx.AsyncClient:
    """One client for the whole sweep: connections (to the forward's socket) are kept and reused
    between requests and levels."""
    limits = httpx.Limits(max_connections=slots + 4, max_keepalive_connections=slots + 4)
    # a long read timeout: under load a prefill can queue for minutes; a pool wait never happens
    # (closed loop)
    timeout = httpx.Timeout(connect=15, read=900, write=60, pool=None)
    return endpoint.client(timeout=timeout, limits=limits)


async def stream_one(http: httpx.AsyncClient, url: str, body: dict) -> RequestRecord:
    sent = time.monotonic()
    record = RequestRecord(ok=False, sent_at=sent, done_at=sent)
    last_raw = b""
    seen, latest = 0, sent
    try:
        async with http.stream("POST", url, json=body) as response:
            if response.status_code != 200:
                detail = (await response.aread()).decode("utf-8", "replace")[:200]
                record.error = f"HTTP {response.status_code}: {detail}".strip()
                return _finish(record)
            async for raw in _data_lines(response):
                now = time.monotonic()
                match = COMPLETION.search(raw)
                count = int(match.group(1)) if match else seen
                if count > seen:
                    if record.first_at is None:
                        record.first_at = now
                    else:
                        # tokens arriving together share the gap, as bench_serving counts them
                        record.itl_s.extend([(now - latest) / (count - seen)] * (count - seen))
                    seen, latest = count, now
                last_raw = raw
    except httpx.HTTPError as exc:
        record.error = f"{type(exc).__name__}: {exc}".strip(": ")
        return _finish(record)
    _read_meta(record, last_raw)
    record.ok = record.completion_tokens > 0 and not record.error
    if not record.ok and not record.error:
        record.error = "the stream ended without a token"
    return _finish(record)


async def _data_lines(response: httpx.Response):
    buffer = b""
    async for chunk in response.aiter_bytes():
        buffer += chunk
        *lines, buffer = buffer.split(b"\n")
        for line in lines:
            if line.startswith(b"data:") and line[5:].strip() != DONE:
                yield line[5:]
    if buffer.startswith(b"data:") and buffer[5:].strip() != DONE:
        yield buffer[5:]


def _read_meta(record: RequestRecord, raw: bytes) -> None:
    try:
        chunk = json.loads(raw) if raw else {}
    except ValueError:
        record.error = f"unexpected stream data: {raw[:80]!r}"
        return
    meta = (chunk.get("meta_info") or {}) if isinstance(chunk, dict) else {}
    record.completion_tokens = int(meta.get("completion_tokens") or 0)
    record.prompt_tokens = int(meta.get("prompt_tokens") or 0)
    accept = meta.get("spec_accept_length")
    record.accept_len = float(accept) if accept else None
    record.verify_ct = int(meta["spec_verify_ct"]) if meta.get("spec_verify_ct") else None


def _finish(record: RequestRecord) -> RequestRecord:
    record.done_at = time.monotonic()
    return record


async def run_level(
    http: httpx.AsyncClient,
    url: str,
    bodies: Sequence[dict],
    concurrency: int,
    on_done: Callable[[RequestRecord], None] = lambda record: None,
) -> tuple[list[RequestRecord], float, float]:
    """Keep `concurrency` requests in flight until every body was sent; (records, started,
    ended)."""
    pending = iter(enumerate(bodies))
    records: list[RequestRecord | None] = [None] * len(bodies)

    async def slot() -> None:
        # one shared iterator: the next request leaves as soon as any slot frees (closed loop)
        for index, body in pending:
            records[index] = await stream_one(http, url, body)
            on_done(records[index])

    started = time.monotonic()
    await asyncio.gather(*(slot() for _ in range(min(concurrency, len(bodies)))))
    return [record for record in records if record is not None], started, time.monotonic()
