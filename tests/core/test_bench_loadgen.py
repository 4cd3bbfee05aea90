"""The console's load generator against an in-process SGLang-like /generate (httpx
MockTransport)."""

from __future__ import annotations

import asyncio
import json

import httpx
import pytest

from sglconsole.bench import loadgen


def sse(meta: dict, text: str = "x") -> bytes:
    return f"data: {json.dumps({'text': text, 'meta_info': meta})}\n\n".encode()


class FakeServer:
    """Streams `steps` chunks of `per_chunk` tokens, `gap` seconds apart; counts requests in
    flight."""

    def __init__(self, steps: int = 4, per_chunk: int = 3, gap: float = 0.01, status: int = 200):
        self.steps, self.per_chunk, self.gap, self.status = steps, per_chunk, gap, status
        self.in_flight = self.most = self.seen = 0

    async def handle(self, request: httpx.Request) -> httpx.Response:
        body = json.loads(request.content)
        self.seen += 1
        if self.status != 200:
            return httpx.Response(self.status, text="server busy")
        return httpx.Response(
            200, content=self.stream(body), headers={"content-type": "text/event-stream"}
        )

    async def stream(self, body: dict):
        self.in_flight += 1
        self.most = max(self.most, self.in_flight)
        try:
            for step in range(1, self.steps + 1):
                await asyncio.sleep(self.gap)
                tokens = step * self.per_chunk
                meta = {"completion_tokens": tokens, "prompt_tokens": len(body["input_ids"])}
                if step == self.steps:
                    meta.update(
                        spec_accept_length=2.5,
                        spec_verify_ct=tokens // 2,
                        finish_reason={"type": "length"},
                    )
                yield sse(meta)
            yield b"data: [DONE]\n\n"
        finally:
            self.in_flight -= 1


def client(server: FakeServer) -> httpx.AsyncClient:
    return httpx.AsyncClient(transport=httpx.MockTransport(server.handle), base_url="http://sim")


BODY = {"input_ids": [1000] * 16, "sampling_params": {"max_new_tokens": 12}, "stream": True}


def test_one_stream_measures_ttft_itl_and_reads_meta_info():
    async def run():
        async with client(FakeServer(steps=4, per_chunk=3, gap=0.02)) as http:
            return await loadgen.stream_one(http, "http://sim/generate", BODY)

    record = asyncio.run(run())
    assert record.ok and record.completion_tokens == 12 and record.prompt_tokens == 16
    assert record.ttft_s == pytest.approx(0.02, abs=0.015)
    assert (
        len(record.itl_s) == 9
    )  # tokens after the first chunk, each with its share of the chunk's gap
    assert all(gap == pytest.approx(0.02 / 3, abs=0.01) for gap in record.itl_s)
    assert record.verify_ct == 6 and record.accept_len == 2.5


def test_an_http_error_is_a_failed_request_not_an_exception():
    async def run():
        async with client(FakeServer(status=503)) as http:
            return await loadgen.stream_one(http, "http://sim/generate", BODY)

    record = asyncio.run(run())
    assert not record.ok and record.error == "HTTP 503: server busy"


def test_the_closed_loop_keeps_exactly_the_concurrency_in_flight():
    server = FakeServer(steps=3, gap=0.01)
    done = []

    async def run():
        async with client(server) as http:
            return await loadgen.run_level(http, "http://sim/generate", [BODY] * 10, 3, done.append)

    records, started, ended = asyncio.run(run())
    assert len(records) == 10 == server.seen == len(done) and all(r.ok for r in records)
    assert server.most == 3 and ended > started
