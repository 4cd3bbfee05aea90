"""SGLang's HTTP API on the simulated server, with SGLang's field names."""

from __future__ import annotations

import json
import time
import uuid
from typing import TYPE_CHECKING

from console.sim.http import Request, Response, json_response, text_response

if TYPE_CHECKING:
    from console.sim.server import SimServer


class Routes:
    def __init__(self, server: SimServer):
        self.server = server

    def table(self) -> dict:
        routes = {
            ("GET", "/health"): self.health,
            ("GET", "/health_generate"): self.health_generate,
            ("GET", "/model_info"): self.model_info,
            ("GET", "/get_model_info"): self.model_info,
            ("GET", "/server_info"): self.server_info,
            ("GET", "/get_server_info"): self.server_info,
            ("POST", "/generate"): self.generate,
            ("GET", "/v1/models"): self.models,
            ("POST", "/v1/chat/completions"): self.chat,
            ("GET", "/get_load"): self.load,
        }
        if self.server.args.get("enable_metrics"):
            routes[("GET", "/metrics")] = self.metrics
        return routes

    # ----------------------------------------------------------------- health

    def _starting(self) -> Response | None:
        return None if self.server.ready else text_response("", 503)

    async def health(self, request: Request) -> Response:
        return self._starting() or text_response("", 200)

    async def health_generate(self, request: Request) -> Response:
        if (busy := self._starting()) is not None:
            return busy
        if self.server.engine.running:
            return text_response("", 200)  # SGLang: progress of running requests counts
        job = self.server.engine.new_request("0", 1, background=True)
        await job.done.wait()
        return text_response("", 200)

    # ------------------------------------------------------------------- info

    async def model_info(self, request: Request) -> Response:
        args = self.server.resolved or self.server.args
        return json_response(
            {
                "model_path": args.get("model_path"),
                "tokenizer_path": args.get("tokenizer_path") or args.get("model_path"),
                "is_generation": True,
                "preferred_sampling_params": None,
                "weight_version": "default",
                "has_image_understanding": False,
                "has_audio_understanding": False,
                "model_type": "qwen3",
                "architectures": ["Qwen3ForCausalLM"],
            }
        )

    async def server_info(self, request: Request) -> Response:
        server = self.server
        engine = server.engine
        info = dict(server.resolved or server.args)
        info["version"] = server.version
        info["launch_command"] = " ".join(["python3", "-m", "sglang.launch_server", *server.argv])
        stats = engine.stats if engine else None
        info["internal_states"] = [
            {
                "last_gen_throughput": stats.gen_throughput if stats else 0.0,
                "avg_spec_accept_length": stats.accept_len if stats else 0.0,
                "max_total_num_tokens": engine.max_total_tokens if engine else 0,
                "memory_usage": {"weight": 0.0, "kvcache": 0.0, "token_capacity": engine.max_total_tokens if engine else 0},
            }
        ]
        return json_response(info)

    async def load(self, request: Request) -> Response:
        stats = self.server.engine.stats if self.server.engine else None
        return json_response([{"dp_rank": 0, "num_reqs": (stats.running + stats.queued) if stats else 0, "num_waiting_reqs": stats.queued if stats else 0}])

    async def models(self, request: Request) -> Response:
        args = self.server.resolved or self.server.args
        name = args.get("served_model_name") or args.get("model_path")
        return json_response(
            {
                "object": "list",
                "data": [
                    {
                        "id": name,
                        "object": "model",
                        "created": int(self.server.started),
                        "owned_by": "sglang",
                        "root": name,
                        "max_model_len": args.get("context_length"),
                    }
                ],
            }
        )

    # -------------------------------------------------------------- generate

    async def generate(self, request: Request) -> Response:
        if (busy := self._starting()) is not None:
            return busy
        body = request.json()
        prompt = body.get("text")
        if isinstance(prompt, list):
            prompt = prompt[0] if prompt else ""
        if not isinstance(prompt, str):
            prompt = " ".join(str(i) for i in body.get("input_ids") or [0])
        params = body.get("sampling_params") or {}
        max_new = int(params.get("max_new_tokens", 128))
        job = self.server.engine.new_request(prompt, max_new)
        if body.get("stream"):
            return Response(200, stream=self._generate_stream(job), content_type="text/event-stream")
        await job.done.wait()
        return json_response({"text": job.output_text, "output_ids": list(range(job.generated)), "meta_info": self._meta(job)})

    async def _generate_stream(self, job):
        while True:
            if job.done.is_set() and job.updates.empty():
                break
            await job.updates.get()
            while not job.updates.empty():
                job.updates.get_nowait()
            data = {"text": job.output_text, "output_ids": list(range(job.generated)), "meta_info": self._meta(job)}
            yield f"data: {json.dumps(data)}\n\n".encode()
        yield b"data: [DONE]\n\n"

    def _meta(self, job) -> dict:
        finished = job.finished_at is not None
        meta = {
            "id": job.rid,
            "finish_reason": job.finish_reason if finished else None,
            "prompt_tokens": job.prompt_tokens,
            "weight_version": "default",
            "total_retractions": 0,
            "completion_tokens": job.generated,
            "cached_tokens": 0,
            "e2e_latency": (job.finished_at or time.monotonic()) - job.created,
        }
        if self.server.engine.perf.spec_enabled:
            meta["spec_accept_length"] = job.accept_length
            meta["spec_verify_ct"] = job.verify_ct
        return meta

    async def chat(self, request: Request) -> Response:
        if (busy := self._starting()) is not None:
            return busy
        body = request.json()
        messages = body.get("messages") or []
        prompt = "\n".join(str(m.get("content", "")) for m in messages if isinstance(m, dict))
        max_new = int(body.get("max_tokens") or body.get("max_completion_tokens") or 128)
        job = self.server.engine.new_request(prompt, max_new)
        model = body.get("model") or self.server.resolved.get("served_model_name")
        cid = uuid.uuid4().hex
        if body.get("stream"):
            return Response(200, stream=self._chat_stream(job, cid, model), content_type="text/event-stream")
        await job.done.wait()
        reason = (job.finish_reason or {}).get("type", "stop")
        return json_response(
            {
                "id": cid,
                "object": "chat.completion",
                "created": int(time.time()),
                "model": model,
                "choices": [{"index": 0, "message": {"role": "assistant", "content": job.output_text, "reasoning_content": None, "tool_calls": None}, "logprobs": None, "finish_reason": reason, "matched_stop": None}],
                "usage": {"prompt_tokens": job.prompt_tokens, "total_tokens": job.prompt_tokens + job.generated, "completion_tokens": job.generated, "prompt_tokens_details": None},
            }
        )

    async def _chat_stream(self, job, cid: str, model: str):
        sent = 0
        first = True
        while True:
            if job.done.is_set() and job.updates.empty():
                break
            await job.updates.get()
            text = job.output_text
            delta = {"role": "assistant", "content": text[sent:]} if first else {"content": text[sent:]}
            first, sent = False, len(text)
            chunk = {"id": cid, "object": "chat.completion.chunk", "created": int(time.time()), "model": model, "choices": [{"index": 0, "delta": delta, "logprobs": None, "finish_reason": None}]}
            yield f"data: {json.dumps(chunk)}\n\n".encode()
        reason = (job.finish_reason or {}).get("type", "stop")
        final = {"id": cid, "object": "chat.completion.chunk", "created": int(time.time()), "model": model, "choices": [{"index": 0, "delta": {}, "logprobs": None, "finish_reason": reason}], "usage": {"prompt_tokens": job.prompt_tokens, "completion_tokens": job.generated, "total_tokens": job.prompt_tokens + job.generated}}
        yield f"data: {json.dumps(final)}\n\n".encode()
        yield b"data: [DONE]\n\n"

    # ---------------------------------------------------------------- metrics

    async def metrics(self, request: Request) -> Response:
        engine = self.server.engine
        stats = engine.stats
        name = self.server.resolved.get("served_model_name") or ""
        labels = f'model_name="{name}",engine_type="unified",tp_rank="0",pp_rank="0"'
        gauges = {
            "sglang:num_running_reqs": ("The number of running requests.", stats.running),
            "sglang:num_queue_reqs": ("The number of requests in the waiting queue.", stats.queued),
            "sglang:token_usage": ("The token usage.", stats.token_usage),
            "sglang:gen_throughput": ("The generation throughput (token/s).", stats.gen_throughput),
            "sglang:spec_accept_length": ("The average acceptance length of speculative decoding.", stats.accept_len),
            "sglang:num_used_tokens": ("The number of used tokens.", engine._kv_tokens()),
            "sglang:max_total_num_tokens": ("Maximum total number of tokens in the KV cache pool.", engine.max_total_tokens),
        }
        counters = {
            "sglang:prompt_tokens": ("Number of prefill tokens processed.", stats.prompt_tokens_total),
            "sglang:generation_tokens": ("Number of generation tokens processed.", stats.generation_tokens_total),
            "sglang:num_requests": ("The number of processed requests.", stats.requests_total),
        }
        out = []
        for metric, (help_text, value) in gauges.items():
            out += [f"# HELP {metric} {help_text}", f"# TYPE {metric} gauge", f"{metric}{{{labels}}} {float(value)}"]
        for metric, (help_text, value) in counters.items():
            out += [f"# HELP {metric}_total {help_text}", f"# TYPE {metric}_total counter", f"{metric}_total{{{labels}}} {float(value)}"]
        return text_response("\n".join(out) + "\n", content_type="text/plain; version=0.0.4; charset=utf-8")

