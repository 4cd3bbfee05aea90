"""SGLang's HTTP API on the simulated server, with SGLang's field names."""

from __future__ import annotations

import asyncio
import gzip
import os
import time
from typing import TYPE_CHECKING

from sglconsole.sim import settings, versiontable
from sglconsole.sim.server import logfmt, metrics_page
from sglconsole.sim.server.graphs import PREFILL_GRAPH_TOKENS
from sglconsole.sim.server.http import Request, Response, json_response, text_response
from sglconsole.sim.server.redact import launch_command
from sglconsole.sim.server.routes_generate import Generation, not_ready
from sglconsole.sim.server.routes_load import get_load_body, v1_loads_body

if TYPE_CHECKING:
    from sglconsole.sim.server.main import SimServer


def _clock(when: float) -> str:
    return time.strftime("%H:%M:%S", time.localtime(when))


def _embedding_plan(args: dict) -> dict:
    """0.5.17's /model_info `embedding` for a generation model (the real capture's shape): not an
    embedding model, its breakable prefill CUDA graph described."""
    return {
        "family": "none",
        "task": "none",
        "execution": "none",
        "attention": "none",
        "pooling": "model_defined",
        "normalize": False,
        "postprocessor": "none",
        "tokenizer_special_tokens": "model_default",
        "supports_dimensions": False,
        "supports_token_embeddings": False,
        "supports_multimodal": False,
        "requires_embedding_flag": False,
        "auto_enable_embedding": False,
        "bcg_eligibility": "disabled",
        "safe_disable_kv_cache": False,
        "safe_disable_radix_cache": False,
        "safe_disable_chunked_prefill": False,
        "enabled": False,
        "matryoshka_dimensions": [],
        "bcg": {
            "prefill_backend": "breakable",
            "enabled": not args.get("disable_cuda_graph"),
            "capture_token_budget": int(args.get("chunked_prefill_size") or 8192),
            "capture_batch_sizes": list(PREFILL_GRAPH_TOKENS),
        },
        "cache": {
            "kv_cache_disabled": False,
            "radix_cache_disabled": bool(args.get("disable_radix_cache")),
            "chunked_prefill_disabled": False,
        },
    }


def _server_args(args: dict, table: dict) -> dict:
    """The argparse namespace as SGLang's ServerArgs fields (from_cli_args renames
    tensor_parallel_size to tp_size, ...; dests that are no field are not listed)."""
    fields = table.get("server_args_fields")
    if not fields:
        return dict(args)
    renamed = {
        table.get("cli_dest_renames", {}).get(dest, dest): value for dest, value in args.items()
    }
    return {name: renamed.get(name) for name in fields}


class Routes:
    def __init__(self, server: SimServer):
        self.server = server
        self.generation = Generation(server)
        self._fault_read = 0.0
        self._fault_value: str | None = None
        self._fault_paths: list[str] | None = None

    def table(self) -> dict:
        """The routes this SGLang version registers (its table) that the simulator answers."""
        handlers = {
            "/health": self.health,
            "/health_generate": self.health_generate,
            "/ready": self.ready,
            "/model_info": self.model_info,
            "/get_model_info": self.model_info,
            "/server_info": self.server_info,
            "/get_server_info": self.server_info,
            "/get_load": self.load,
            "/v1/loads": self.loads,
            "/generate": self.generation.generate,
            "/v1/models": self.models,
            "/v1/chat/completions": self.generation.chat,
        }
        table = versiontable.load(self.server.version)
        routes = {}
        for route in table["routes"]:
            handler = handlers.get(route["path"])
            if handler is None:
                continue
            warning = (route.get("deprecated") or {}).get("warning")
            for method in route["methods"]:
                routes[(method, route["path"])] = (
                    self._warns(handler, warning) if warning else handler
                )
        if self.server.args.get("enable_metrics") and table.get("metrics_mount"):
            routes[("GET", table["metrics_mount"])] = self.metrics
        return {key: self._faulty(handler) for key, handler in routes.items()}

    @staticmethod
    def _warns(handler, warning: str):
        """A deprecated alias: SGLang logs its warning, then answers like the new name."""

        async def wrapped(request: Request) -> Response:
            print(logfmt.line(warning, ""), flush=True)
            return await handler(request)

        return wrapped

    def _faulty(self, handler):
        """The host's `http` setting makes every endpoint (or those in `http_paths`) hang, fail,
        or answer nonsense (re-read live)."""

        async def wrapped(request: Request) -> Response:
            fault = self._fault(request.path)
            if fault == "hang":
                await asyncio.sleep(3600)
            if fault == "500":
                return json_response(
                    {"error": {"message": "Internal Server Error (simulated)"}}, 500
                )
            if fault == "garbage":
                return Response(200, b"<html><body>502 Bad Gateway</body></html>", "text/html")
            if fault == "wrong_json":
                return json_response(["not", "what", "you", "expected"])
            return await handler(request)

        return wrapped

    def _fault(self, path: str) -> str | None:
        now = time.monotonic()
        if now - self._fault_read > 0.5:
            self._fault_read = now
            found = settings.server_settings(self.server.root, self.server.port)
            self._fault_value, self._fault_paths = found.get("http"), found.get("http_paths")
        paths = self._fault_paths
        return self._fault_value if not paths or path in paths else None

    # ----------------------------------------------------------------- health

    def _starting(self) -> Response | None:
        return not_ready(self.server)

    async def ready(self, request: Request) -> Response:
        return self._starting() or text_response("", 200)

    async def health(self, request: Request) -> Response:
        if os.environ.get("SGLANG_ENABLE_HEALTH_ENDPOINT_GENERATION", "true").lower() in (
            "0",
            "false",
            "no",
        ):
            return self._starting() or text_response("", 200)
        return await self.health_generate(request)

    async def health_generate(self, request: Request) -> Response:
        """SGLang's health_generate: a 1-token generation, then a poll once a second until the
        tokenizer hears from the scheduler (anything, not only this request); after
        HEALTH_CHECK_TIMEOUT seconds of silence it logs why and answers 503."""
        if (busy := self._starting()) is not None:
            return busy
        engine = self.server.engine
        engine.new_request("0", 1, background=True)
        timeout = self._health_timeout()
        tic = time.time()
        while time.time() < tic + timeout:
            await asyncio.sleep(1)
            if engine.last_output > tic:
                return text_response("", 200)
        print(
            logfmt.line(
                "Health check failed. Server couldn't get a response from detokenizer for last "
                f"{timeout} seconds. tic start time: {_clock(tic)}. "
                f"last_heartbeat time: {_clock(engine.last_output)}",
                "",
            ),
            flush=True,
        )
        return text_response("", 503)

    def _health_timeout(self) -> int | float:
        """SGLang's HEALTH_CHECK_TIMEOUT (env SGLANG_HEALTH_CHECK_TIMEOUT, default 20 s); the host
        setting `health_timeout_s` overrides it so tests need not wait 20 s."""
        configured = settings.server_settings(self.server.root, self.server.port).get(
            "health_timeout_s"
        )
        if configured:
            return configured
        try:
            return int(os.environ.get("SGLANG_HEALTH_CHECK_TIMEOUT", 20))
        except ValueError:
            return 20

    # ------------------------------------------------------------------- info

    async def model_info(self, request: Request) -> Response:
        args = self.server.resolved or self.server.args
        known = {
            "model_path": args.get("model_path"),
            "served_model_name": args.get("served_model_name") or args.get("model_path"),
            "tokenizer_path": args.get("tokenizer_path") or args.get("model_path"),
            "is_generation": True,
            "preferred_sampling_params": None,
            "weight_version": "default",
            "load_format": args.get("load_format"),
            "reasoning_parser": args.get("reasoning_parser"),
            "tool_call_parser": args.get("tool_call_parser"),
            "disaggregation_mode": args.get("disaggregation_mode") or "null",
            "has_image_understanding": False,
            "has_audio_understanding": False,
            "model_type": "qwen3",
            "architectures": ["Qwen3ForCausalLM"],
        }
        if "embedding" in (versiontable.load(self.server.version).get("model_info_keys") or []):
            known["embedding"] = _embedding_plan(args)
        keys = versiontable.load(self.server.version).get("model_info_keys") or list(known)
        return json_response({key: known.get(key) for key in keys if key in known})

    async def server_info(self, request: Request) -> Response:
        server = self.server
        engine = server.engine
        if engine is not None and engine.stall is not None:
            await engine.stall.wait_unstalled()  # get_internal_state asks the scheduler
        resolved = dict(server.resolved or server.args)
        stats = engine.stats if engine else None
        extra = {
            "startup_time": server.startup_timings or server.started,
            "frontend": "rust" if server.children.rust_server else "python",
            "launch_command": launch_command(server.argv),
            "kv_events": None,
        }
        table = versiontable.load(server.version)
        wanted = table.get("server_info_extra_keys") or []
        resolved = _server_args(resolved, table)
        info = dict(resolved)
        info.update({key: value for key, value in extra.items() if key in wanted})
        info.update(
            status="ready" if server.ready else "starting",
            max_total_num_tokens=engine.max_total_tokens if engine else 0,
            max_req_input_len=int(resolved.get("context_length") or 0) - 1,
            # ServerArgs keeps what was given; the model's own length lives in its config
            context_length=server.args.get("context_length"),
        )
        state = dict(resolved)
        state.update(
            last_gen_throughput=stats.gen_throughput if stats else 0.0,
            effective_max_running_requests_per_dp=resolved.get("max_running_requests"),
            memory_usage={
                "weight": 0.0,
                "kvcache": 0.0,
                "token_capacity": engine.max_total_tokens if engine else 0,
            },
        )
        if engine and engine.perf.spec_enabled:
            state["avg_spec_accept_length"] = stats.accept_len
        info["internal_states"] = [state]
        info["version"] = server.version
        return json_response(info)

    async def load(self, request: Request) -> Response:
        return json_response(get_load_body(self.server))

    async def loads(self, request: Request) -> Response:
        """/v1/loads, in the version's shape. It asks the scheduler: on a real 0.5.17 on an H200
        it answered nothing for the 77 s its scheduler was wedged (its access lines came after),
        while /get_load answered at once with frozen values."""
        shape = versiontable.load(self.server.version).get("v1_loads")
        if not shape:
            return json_response({"detail": "Not Found"}, 404)
        engine = self.server.engine
        if engine is not None and engine.stall is not None:
            await engine.stall.wait_unstalled()
        include = {part.strip() for part in (request.query.get("include") or [""])[0].split(",")}
        include.discard("")
        return json_response(v1_loads_body(self.server, shape, include or None))

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
                        "parent": None,
                        "max_model_len": args.get("context_length"),
                    }
                ],
            }
        )

    # ---------------------------------------------------------------- metrics

    async def metrics(self, request: Request) -> Response:
        """The page, gzipped for a client that accepts it: SGLang mounts prometheus_client's
        make_asgi_app, which compresses whenever the Accept-Encoding header names gzip."""
        page = self._metrics_page()
        if "gzip" in request.headers.get("accept-encoding", ""):
            page.body = gzip.compress(page.body)
            page.headers["Content-Encoding"] = "gzip"
        return page

    def _metrics_page(self) -> Response:
        if versiontable.load(self.server.version).get("metric_families"):
            return text_response(
                metrics_page.render(self.server),
                content_type="text/plain; version=0.0.4; charset=utf-8",
            )
        engine = self.server.engine
        stats = engine.stats
        name = self.server.resolved.get("served_model_name") or ""
        labels = (
            f'engine_type="unified",model_name="{name}",moe_ep_rank="0",pp_rank="0",tp_rank="0"'
        )
        gauges = {
            "sglang:num_running_reqs": ("The number of running requests.", stats.running),
            "sglang:num_queue_reqs": ("The number of requests in the waiting queue.", stats.queued),
            "sglang:token_usage": ("The token usage.", stats.token_usage),
            "sglang:gen_throughput": ("The generation throughput (token/s).", stats.gen_throughput),
            "sglang:spec_accept_length": (
                "The average acceptance length of speculative decoding.",
                stats.accept_len,
            ),
            "sglang:num_used_tokens": ("The number of used tokens.", stats.used_tokens),
            "sglang:max_total_num_tokens": (
                "Maximum total number of tokens in the KV cache pool.",
                engine.max_total_tokens,
            ),
        }
        counters = {
            "sglang:prompt_tokens": (
                "Number of prefill tokens processed.",
                stats.prompt_tokens_total,
            ),
            "sglang:generation_tokens": (
                "Number of generation tokens processed.",
                stats.generation_tokens_total,
            ),
            "sglang:num_requests": ("The number of processed requests.", stats.requests_total),
        }
        counter_labels = (
            f'engine_type="unified",model_name="{name}"'  # counters carry no rank labels
        )
        out = []
        for metric, (help_text, value) in gauges.items():
            out += [
                f"# HELP {metric} {help_text}",
                f"# TYPE {metric} gauge",
                f"{metric}{{{labels}}} {float(value)}",
            ]
        extra = versiontable.load(self.server.version).get("metric_extra_labels") or {}
        for metric, (help_text, value) in counters.items():
            out += [f"# HELP {metric}_total {help_text}", f"# TYPE {metric}_total counter"]
            if "is_streaming" in extra.get(f"{metric}_total", []):
                # 0.5.17: one series per is_streaming value (the sim counts all as non-streaming)
                for streaming, part in (("false", value), ("true", 0)):
                    labels_here = (
                        f'engine_type="unified",is_streaming="{streaming}",model_name="{name}"'
                    )
                    out.append(f"{metric}_total{{{labels_here}}} {float(part)}")
            else:
                out.append(f"{metric}_total{{{counter_labels}}} {float(value)}")
        return text_response(
            "\n".join(out) + "\n", content_type="text/plain; version=0.0.4; charset=utf-8"
        )
