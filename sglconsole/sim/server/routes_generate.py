"""SGLang's generation endpoints on the simulated server: /generate and
/v1/chat/completions, whole or streamed (server-sent events), with SGLang's field names."""

from __future__ import annotations

import json
import time
import uuid
from typing import TYPE_CHECKING

from sglconsole.sim.server import corpus
from sglconsole.sim.server.http import Request, Response, json_response, text_response
from sglconsole.sim.server.stall import needs_flashinfer_sampling

if TYPE_CHECKING:
    from sglconsole.sim.server.main import SimServer


def not_ready(server: SimServer) -> Response | None:
    """SGLang answers 503 until the server is ready."""
    return None if server.ready else text_response("", 503)


class Generation:
    def __init__(self, server: SimServer):
        self.server = server

    async def _start(self, prompt: str, max_new: int, params: dict):
        """The request into the scheduler, as the host's misbehaviours (misbehave.py) have it: a
        hung one never gets there (None is returned only once the client has gone)."""
        misbehaviour = self.server.misbehaviour
        hang, degrade = misbehaviour.admit()
        if hang:
            await misbehaviour.hang()
        job = self.server.engine.new_request(prompt, max_new, sampled=self._sampled(params))
        # before the scheduler's next tick (no await since): what it will generate
        known = corpus.known_answer(prompt)
        if degrade:
            job.words = corpus.degenerate_stream(prompt)
        elif known is not None and not self.server.engine.degenerate:  # a broken build loops
            job.words = corpus.WordStream(misbehaviour.vary(known), ends=True)
        return job

    async def generate(self, request: Request) -> Response:
        if (busy := not_ready(self.server)) is not None:
            return busy
        body = request.json()
        prompt = body.get("text")
        if isinstance(prompt, list):
            prompt = prompt[0] if prompt else ""
        if not isinstance(prompt, str):
            prompt = " ".join(str(token_id) for token_id in body.get("input_ids") or [0])
        params = body.get("sampling_params") or {}
        max_new = int(params.get("max_new_tokens", 128))
        job = await self._start(prompt, max_new, params)
        if body.get("stream"):
            return Response(
                200, stream=self._generate_stream(job), content_type="text/event-stream"
            )
        await job.done.wait()
        return json_response(
            {
                "text": job.output_text,
                "output_ids": list(range(job.generated)),
                "meta_info": self._meta(job),
            }
        )

    def _sampled(self, params: dict) -> bool:
        return needs_flashinfer_sampling(params, self.server.args.get("sampling_backend"))

    async def _generate_stream(self, job):
        try:
            while True:
                if job.done.is_set() and job.updates.empty():
                    break
                await job.updates.get()
                while not job.updates.empty():
                    job.updates.get_nowait()
                data = {
                    "text": job.output_text,
                    "output_ids": list(range(job.generated)),
                    "meta_info": self._meta(job),
                }
                yield f"data: {json.dumps(data)}\n\n".encode()
            yield b"data: [DONE]\n\n"
        finally:  # closed before its end: the client disconnected
            self.server.engine.abort(job)

    def _meta(self, job) -> dict:
        finished = job.finished_at is not None
        meta = {
            "id": job.rid,
            "finish_reason": job.finish_reason if finished else None,
            "prompt_tokens": job.prompt_tokens,
            "weight_version": "default",
            "num_retractions": 0,
            "reasoning_tokens": 0,
            "completion_tokens": job.generated,
            "cached_tokens": 0,
        }
        if finished:
            meta["e2e_latency"] = job.finished_at - job.created
            perf = self.server.engine.perf
            if perf.spec_enabled:
                proposed = job.verify_ct * max(1, perf.draft_tokens - 1)
                correct = max(0, job.generated - job.verify_ct)
                meta.update(
                    spec_accept_rate=correct / proposed if proposed else 0.0,
                    spec_accept_length=job.accept_length,
                    spec_num_correct_drafts=correct,
                    spec_num_proposed_drafts=proposed,
                    spec_verify_ct=job.verify_ct,
                )
        return meta

    async def chat(self, request: Request) -> Response:
        if (busy := not_ready(self.server)) is not None:
            return busy
        body = request.json()
        messages = body.get("messages") or []
        prompt = "\n".join(
            str(message.get("content", "")) for message in messages if isinstance(message, dict)
        )
        max_new = int(body.get("max_tokens") or body.get("max_completion_tokens") or 128)
        params = {
            key: body[key] for key in ("temperature", "top_p", "top_k", "min_p") if key in body
        }
        job = await self._start(prompt, max_new, params)
        model = body.get("model") or self.server.resolved.get("served_model_name")
        cid = f"chatcmpl-{uuid.uuid4().hex}"
        if body.get("stream"):
            return Response(
                200, stream=self._chat_stream(job, cid, model), content_type="text/event-stream"
            )
        await job.done.wait()
        reason = (job.finish_reason or {}).get("type", "stop")
        return json_response(
            {
                "id": cid,
                "object": "chat.completion",
                "created": int(time.time()),
                "model": model,
                "choices": [
                    {
                        "index": 0,
                        "message": {
                            "role": "assistant",
                            "content": job.output_text,
                            "reasoning_content": None,
                            "tool_calls": None,
                        },
                        "logprobs": None,
                        "finish_reason": reason,
                        "matched_stop": None,
                    }
                ],
                "usage": {
                    "prompt_tokens": job.prompt_tokens,
                    "total_tokens": job.prompt_tokens + job.generated,
                    "completion_tokens": job.generated,
                    "prompt_tokens_details": None,
                },
            }
        )

    async def _chat_stream(self, job, cid: str, model: str):
        try:
            sent = 0
            first = True
            while True:
                if job.done.is_set() and job.updates.empty():
                    break
                await job.updates.get()
                text = job.output_text
                delta = (
                    {"role": "assistant", "content": text[sent:], "reasoning_content": None}
                    if first
                    else {"content": text[sent:], "reasoning_content": None}
                )
                first, sent = False, len(text)
                chunk = {
                    "id": cid,
                    "object": "chat.completion.chunk",
                    "created": int(time.time()),
                    "model": model,
                    "choices": [
                        {"index": 0, "delta": delta, "logprobs": None, "finish_reason": None}
                    ],
                }
                yield f"data: {json.dumps(chunk)}\n\n".encode()
            reason = (job.finish_reason or {}).get("type", "stop")
            final = {
                "id": cid,
                "object": "chat.completion.chunk",
                "created": int(time.time()),
                "model": model,
                "choices": [{"index": 0, "delta": {}, "logprobs": None, "finish_reason": reason}],
                "usage": {
                    "prompt_tokens": job.prompt_tokens,
                    "completion_tokens": job.generated,
                    "total_tokens": job.prompt_tokens + job.generated,
                },
            }
            yield f"data: {json.dumps(final)}\n\n".encode()
            yield b"data: [DONE]\n\n"
        finally:  # closed before its end: the client disconnected
            self.server.engine.abort(job)
