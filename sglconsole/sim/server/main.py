"""The simulated SGLang server: `<root>/env/bin/python3 -m sglang.launch_server ...`.

Runs as a real process with SGLang's argv, parses it with the version's real flag table,
writes SGLang's startup and decode lines to stdout, spawns children named like SGLang's
(sglang::scheduler_TP0, sglang::detokenizer) that hold the GPU memory, and serves SGLang's
HTTP API. How it misbehaves is a property of the simulated host (settings.py), never of flags.
"""

from __future__ import annotations

import asyncio
import os
import signal
import sys
import time
from multiprocessing import resource_tracker

from sglconsole.sim import envtable, flagtable, gpustate, settings, versiontable
from sglconsole.sim.gpu_models import get_model
from sglconsole.sim.server import args_checks, graphs, logfmt, perf
from sglconsole.sim.server.args_resolve import post_init
from sglconsole.sim.server.children import ServerChildren, write_plan
from sglconsole.sim.server.engine import Engine
from sglconsole.sim.server.failures import (
    SCHEDULER_CRASH,
    StartupFailed,
    invalid_device,
    missing_model,
    out_of_memory,
    port_in_use,
)
from sglconsole.sim.server.history import write_history
from sglconsole.sim.server.http import HttpServer
from sglconsole.sim.server.launch_args import LaunchRefused, parser_argv
from sglconsole.sim.server.misbehave import Misbehaviour
from sglconsole.sim.server.routes import Routes
from sglconsole.sim.server.stall import SchedulerStall, needs_flashinfer_sampling

READY_LINE = "The server is fired up and ready to roll!"


def main(
    argv: list[str] | None = None, *, version: str, root: str, entry: str = "launch_server"
) -> int:
    """`entry`: "launch_server" (python -m sglang.launch_server) or "serve" (`sglang serve`)."""
    warning = versiontable.load(version).get("launch_server_warning")
    if entry == "launch_server" and warning:  # it warns on import, before parsing
        where = sys.argv[0] if sys.argv else "launch_server.py"
        print(
            f"{where}:{warning['line']}: UserWarning: {warning['text']}\n  warnings.warn(",
            file=sys.stderr,
            flush=True,
        )
    parser = flagtable.build_parser(
        version, prog=os.path.basename(sys.argv[0]) if sys.argv else None
    )
    try:  # `sglang serve` and --config reshape argv first; unknown flags: usage, exit 2
        args = vars(parser.parse_args(parser_argv(argv, parser, version, entry)))
    except LaunchRefused as refused:
        return refused.report()
    sys.stdout.reconfigure(line_buffering=True)
    sys.stderr.reconfigure(line_buffering=True)
    server = SimServer(
        args, version=version, root=root, argv=list(sys.argv if argv is None else argv)
    )
    try:
        return asyncio.run(server.run())
    except KeyboardInterrupt:
        return 130


class _Zero(dict):
    """A milestone value the simulator does not model prints as 0."""

    def __missing__(self, key: str) -> int:
        return 0


def say(message: str, prefix: str = "TP0") -> None:
    print(logfmt.line(message, prefix), flush=True)


def plain(message: str) -> None:
    print(f"{logfmt.stamp()} {message}", flush=True)


class SimServer:
    def __init__(self, args: dict, *, version: str, root: str, argv: list[str]):
        self.args = args
        self.version = version
        self.root = root
        self.argv = argv
        self.port = int(args.get("port") or 30000)
        self.settings = settings.server_settings(root, self.port)
        self.host = gpustate.load_host(root)
        self.gpu = get_model(self.host.get("gpu_model", "H200"))
        self.ready = False
        self.started = time.time()
        self.children = ServerChildren(root, self.settings, version)
        self.engine: Engine | None = None
        self.stall = SchedulerStall(root, self.port)
        self.misbehaviour = Misbehaviour(root, self.port)  # healthy but wrong (misbehave.py)
        self.startup_timings: dict | None = None  # /server_info's startup_time (0.5.17+)
        self.resolved: dict = {}
        self._stop = asyncio.Event()

    # ------------------------------------------------------------- lifecycle

    async def run(self) -> int:
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGTERM, signal.SIGINT):
            loop.add_signal_handler(sig, self._stop.set)
        try:
            await self._start()
        except StartupFailed as failure:
            for text in failure.lines:
                print(text, file=sys.stderr, flush=True)
            self.children.stop(force=True)
            return failure.code
        waiters = [asyncio.create_task(self._stop.wait())]
        if self.settings.get("die_after_s"):
            waiters.append(asyncio.create_task(asyncio.sleep(float(self.settings["die_after_s"]))))
        done, pending = await asyncio.wait(waiters, return_when=asyncio.FIRST_COMPLETED)
        for task in pending:
            task.cancel()
        if not self._stop.is_set():
            return self._die()
        self.children.stop(force=False)
        return 0

    def _die(self) -> int:
        say("Scheduler hit an exception: Traceback (most recent call last):", self.prefix(0))
        frame, error = SCHEDULER_CRASH
        print(frame, file=sys.stderr)
        print(error, file=sys.stderr, flush=True)
        self.children.stop(force=False)
        os._exit(1)

    def prefix(self, rank: int = 0) -> str:
        """SGLang prints ` TP{n}` in the scheduler's log prefix only when tp_size > 1."""
        return f"TP{rank}" if self.tp_size > 1 else ""

    def milestone(self, key: str, rank: int, **values) -> None:
        """A startup line in this version's wording; nothing when this version does not log it."""
        template = versiontable.startup(self.version, key)
        if template:
            say(template.format_map(_Zero(values)), self.prefix(rank))

    @property
    def piecewise_graphs(self) -> bool:
        """Piecewise CUDA graphs (prefill): opt-in with --enable-piecewise-cuda-graph in 0.5.9,
        on by default (--disable-piecewise-cuda-graph) in 0.5.11/0.5.12, absent where the
        version logs none."""
        if self.args.get("disable_cuda_graph") or not versiontable.startup(
            self.version, "piecewise_graph_begin"
        ):
            return False
        if "disable_piecewise_cuda_graph" in self.args:
            return not self.args.get("disable_piecewise_cuda_graph")
        return bool(self.args.get("enable_piecewise_cuda_graph"))

    @property
    def tp_size(self) -> int:
        return perf.tp_size(self.args)

    async def _start(self) -> None:
        args = self.args
        startup = max(0.0, float(self.settings.get("startup_s") or 0))
        model = settings.model_info(str(args.get("model_path") or ""))
        args_checks.refuse(self.version, args, model)  # ServerArgs.__post_init__ raises first
        plain(f"server_args={logfmt.server_args_repr(args)}")
        if model is None:
            raise StartupFailed(missing_model(str(args.get("model_path"))))
        gpus = self._gpus()
        tp_size = self.tp_size
        await asyncio.sleep(startup * 0.1)
        # SGLang starts its scheduler with multiprocessing, whose resource tracker is one more
        # child: `python -B -c 'from multiprocessing.resource_tracker import main;main(N)'`
        resource_tracker.ensure_running()
        self.children.spawn(gpus, tp_size)
        weights_gb = float(model.get("sim_weights_gb", 16.0))
        total_gb = self.gpu.mem_total_mib / 1024
        avail = total_gb - self._used_gb(gpus)
        for key in ("dist_init_begin", "dist_init_end", "load_weight_begin"):  # the real 0.5.17's
            for rank in range(tp_size):
                self.milestone(key, rank, elapsed=0.22, mem_usage=0.09, avail_mem=avail)
        await asyncio.sleep(startup * 0.4)
        self._check_memory(gpus, weights_gb / tp_size)
        self._register_memory(gpus, weights_gb / tp_size * 1024)
        arch = model.get("architectures", ["LlamaForCausalLM"])[0]
        for rank in range(tp_size):
            self.milestone(
                "load_weight_end",
                rank,
                elapsed=startup * 0.4 + 3.1,
                type=arch,
                dtype="torch.bfloat16",
                avail_mem=avail - weights_gb / tp_size,
                mem_usage=weights_gb / tp_size,
            )
        fraction = float(args.get("mem_fraction_static") or 0.85)
        pool_gb = max(0.5, total_gb * fraction - weights_gb / tp_size)
        self._check_memory(gpus, total_gb * fraction)
        kv_kb = float(model.get("sim_kv_kb_per_token", 64)) / tp_size
        max_total = int(pool_gb * 1024 * 1024 / kv_kb)
        for rank in range(tp_size):
            self.milestone(
                "kv_cache_allocated",
                rank,
                cache_name="KV Cache",
                dtype="torch.bfloat16",
                tokens=max_total,
                k_size=pool_gb / 2,
                v_size=pool_gb / 2,
            )
            self.milestone("memory_pool_end", rank, avail_mem=total_gb * (1 - fraction))
        self._register_memory(gpus, total_gb * fraction * 1024)
        self.resolved = self._resolve(model, max_total)
        await asyncio.sleep(startup * 0.2)
        free = total_gb * (1 - fraction)
        if not args.get("disable_cuda_graph"):
            await graphs.capture(self, free, startup, weights_gb)
        resolved = self.resolved
        self.milestone(
            "max_total_num_tokens",
            0,
            max_total_num_tokens=max_total,
            chunked_prefill_size=resolved["chunked_prefill_size"],
            max_prefill_tokens=resolved["max_prefill_tokens"],
            max_running_requests=resolved["max_running_requests"],
            context_len=resolved["context_length"],
            available_gpu_mem=free - 0.62,
        )
        self.milestone(
            "tree_cache_initialized",
            0,
            source="default",
            impl="RadixCache",
            hybrid_swa=False,
            hybrid_ssm=model.get("sim_hybrid") == "ssm",
            hierarchical=bool(args.get("enable_hierarchical_cache")),
            hicache_attached=bool(args.get("enable_hierarchical_cache")),  # 0.5.23
            streaming_wrapped=False,
        )
        if versiontable.startup(self.version, "engine_startup_timings"):
            graphs.log_startup_timings(self, startup)
        self.engine = self._engine(model, max_total)
        asyncio.create_task(self.engine.run())
        asyncio.create_task(self.stall.poll())
        asyncio.create_task(self.misbehaviour.kv_canary())
        await self._serve_http()
        await asyncio.sleep(startup * 0.1)
        await self._warmup()
        self.ready = True
        plain(versiontable.startup(self.version, "ready") or READY_LINE)
        write_history(self, int(self.settings.get("log_history_lines") or 0))
        asyncio.create_task(self._background_load())
        asyncio.create_task(self._update_gpu_load(gpus))

    @property
    def split_graphs(self) -> bool:
        """0.5.17+: a target prefill graph (breakable) and a decode/verify graph, each logged with
        its own template (the version table has both)."""
        return bool(versiontable.startup(self.version, "decode_graph_begin"))

    def _gpus(self) -> list[int]:
        tp_size = self.tp_size
        visible = os.environ.get("CUDA_VISIBLE_DEVICES")
        if visible:
            physical = [int(part) for part in visible.split(",") if part.strip().isdigit()]
        else:
            physical = list(range(int(self.host.get("gpu_count", 1))))
        count = int(self.host.get("gpu_count", 1))
        if len(physical) < tp_size or any(gpu >= count for gpu in physical[:tp_size]):
            raise StartupFailed(invalid_device())
        return physical[:tp_size]

    def _used_gb(self, gpus: list[int]) -> float:
        mine = self.children.pids()
        uses = [use for use in gpustate.read_gpu_uses(self.root) if use["pid"] not in mine]
        held = (
            max(
                (sum(use["mem_mib"] for use in uses if gpu in use["gpus"]) for gpu in gpus),
                default=0,
            )
            / 1024
        )
        # memory taken by things outside this simulation (another tenant, a display): a setting
        return held + float(self.settings.get("reserved_gib") or 0)

    def _check_memory(self, gpus: list[int], needed_gb: float) -> None:
        total_gb = self.gpu.mem_total_mib / 1024
        free = total_gb - self._used_gb(gpus)
        if self.settings.get("oom_at_start") or needed_gb > free:
            self.children.stop(force=True)
            raise StartupFailed(out_of_memory(needed_gb, gpus[0], total_gb, free))

    def _register_memory(self, gpus: list[int], mem_mib_per_gpu: float) -> None:
        write_plan(self.root, os.getpid(), {"mem_mib": int(mem_mib_per_gpu + 512), "util": 0})

    async def _update_gpu_load(self, gpus: list[int]) -> None:
        while True:
            running = self.engine.stats.running if self.engine else 0
            util = 0 if running == 0 else min(100, 60 + 5 * running)
            write_plan(self.root, os.getpid(), {"util": util})
            self.children.reap()
            await asyncio.sleep(1.0)

    def _resolve(self, model: dict, max_total: int) -> dict:
        args = dict(self.args)
        context = int(args.get("context_length") or model.get("max_position_embeddings", 32768))
        args["context_length"] = context
        if args.get("max_running_requests") is None:
            args["max_running_requests"] = max(16, min(4096, max_total // 1024))
        args["chunked_prefill_size"] = args.get("chunked_prefill_size") or 8192
        args["max_prefill_tokens"] = args.get("max_prefill_tokens") or 16384
        args["mem_fraction_static"] = float(args.get("mem_fraction_static") or 0.85)
        args["served_model_name"] = args.get("served_model_name") or args.get("model_path")
        args["tokenizer_path"] = args.get("tokenizer_path") or args.get("model_path")
        return post_init(args, int(args["max_running_requests"]))

    def _engine(self, model: dict, max_total: int) -> Engine:
        weights_gb = float(model.get("sim_weights_gb", 16.0))
        env = dict(os.environ)
        model_perf = perf.build(self.args, env, self.gpu.key, weights_gb, version=self.version)
        return Engine(
            model_perf,
            max_running=int(self.resolved["max_running_requests"]),
            max_total_tokens=max_total,
            decode_log_interval=int(self.args.get("decode_log_interval") or 40),
            log=lambda text: print(text, flush=True),
            prefix=self.prefix(0),
            mfu=bool(self.args.get("enable_mfu_metrics")),
            degenerate=settings.degenerate(self.settings, self.version),
            seed=self.port,
            hybrid=model.get("sim_hybrid"),
            tick_s=float(self.settings.get("tick_s") or 0.05),
            log_fields=versiontable.load(self.version)["log"],
            prefill_cuda_graph=self.piecewise_graphs,
            # the real 0.5.17 log: a lone 1-token prefill (a health check) runs eager, 2+ graphed
            prefill_graph_tokens=(2, 8192)
            if self.split_graphs and not self.args.get("disable_cuda_graph")
            else None,
            stall=self.stall,
        )

    async def _serve_http(self) -> None:
        host = str(self.args.get("host") or "127.0.0.1")
        routes = Routes(self)
        self.http = HttpServer(
            routes.table(),
            access_log=plain,
            keep_alive_s=envtable.keep_alive_s(self.version, dict(os.environ)),
            close_reused=bool(self.settings.get("keepalive_race")),
        )
        try:
            await self.http.start(host, self.port)
        except OSError as exc:
            raise StartupFailed(port_in_use(exc.errno, host, self.port)) from None
        plain(f"INFO:     Started server process [{os.getpid()}]")
        plain("INFO:     Waiting for application startup.")
        plain("INFO:     Application startup complete.")
        plain(f"INFO:     Uvicorn running on http://{host}:{self.port} (Press CTRL+C to quit)")

    async def _warmup(self) -> None:
        if self.args.get("skip_server_warmup"):
            return
        plain('INFO:     127.0.0.1:40000 - "GET /model_info HTTP/1.1" 200 OK')
        request = self.engine.new_request("The capital city of France is", 8, background=True)
        await request.done.wait()
        plain('INFO:     127.0.0.1:40000 - "POST /generate HTTP/1.1" 200 OK')

    async def _background_load(self) -> None:
        load = self.settings.get("load") or {}
        concurrency = int(load.get("concurrency") or 0)
        if concurrency <= 0:
            return
        max_tokens = int(load.get("max_tokens") or 256)
        # "sampled": top_p 0.9 like a chat client's, which needs flashinfer's sampling kernels
        sampled = bool(load.get("sampled")) and needs_flashinfer_sampling(
            {"temperature": 0.7, "top_p": 0.9}, self.args.get("sampling_backend")
        )
        prompts = [
            "Explain how speculative decoding works.",
            "Write a python function for primes.",
            "Summarise the benefits of tensor parallelism.",
        ]

        async def worker(index: int) -> None:
            while True:
                request = self.engine.new_request(
                    prompts[index % len(prompts)], max_tokens, background=True, sampled=sampled
                )
                await request.done.wait()
                await asyncio.sleep(float(load.get("pause_s", 0.2)))

        for index in range(concurrency):
            asyncio.create_task(worker(index))
