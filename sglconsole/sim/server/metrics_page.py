"""/metrics with every family a SGLang release declares, from its version table.

tools/gen_sim_version_table.py reads each `sglang:` family from the release's source (name,
type, help, labels, buckets, and the methods that write it). SGLang runs Prometheus in
multiprocess mode, which lists a family only once a value was written: so this page lists the
families whose writers a plain single-node run calls (WRITERS), with values from the engine
where it has them and 0 otherwise. Stdlib only: simulated processes import this.
"""

from __future__ import annotations

import os
import time
from typing import TYPE_CHECKING

from sglconsole.sim import versiontable

if TYPE_CHECKING:
    from sglconsole.sim.server.main import SimServer

# collector methods (and middleware/monitor functions) a plain run calls, so whose families show
WRITERS = {
    "log_stats",  # every scheduler stats tick
    "emit_constants",  # once, at startup
    "emit_startup_time",
    "increment_realtime_tokens",
    "increment_decode_cuda_graph_pass",
    "increment_prefill_cuda_graph_pass",
    "observe_per_stage_req_latency",
    "observe_queue_time",
    "observe_one_finished_request",
    "observe_time_to_first_token",
    "observe_inter_token_latency",
    # not observe_one_aborted_request: the sim aborts only requests whose client left, uncounted
    "add_prometheus_track_response_middleware",
    "start_cpu_monitor_thread",
}
SCHEDULER = ("engine_type", "model_name", "moe_ep_rank", "pp_rank", "tp_rank")
TOKENIZER = ("engine_type", "model_name")
COMMON = {"SchedulerMetricsCollector": SCHEDULER, "TokenizerMetricsCollector": TOKENIZER}
# label values the source builds at run time (from the real 0.5.17 capture)
MODES = {
    "sglang:cuda_graph_passes_total": ("prefill_cuda_graph", "decode_cuda_graph", "prefill_none"),
    "sglang:realtime_tokens_total": ("prefill_compute", "decode", "prefill_cache"),
}
GRAPH_PHASES = (
    "prefill",
    "decode",
    "target_verify",
    "draft_prefill",
    "draft_decode",
    "draft_extend",
)
STARTUP_PHASES = ("load_weight", "kv_cache_allocation", "scheduler_e2e", "tokenizer_e2e")
STAGES = ("request_process", "prefill_forward")
DEFAULT_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.25, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5, 10.0)


def render(server: SimServer) -> str:
    families = versiontable.load(server.version).get("metric_families") or []
    page = _Page(server)
    out: list[str] = []
    for family in families:
        if page.served(family):
            out += page.family(family)
    return "\n".join(out) + "\n"


class _Page:
    def __init__(self, server: SimServer):
        self.server = server
        self.engine = server.engine
        self.stats = server.engine.stats
        self.args = server.resolved or server.args
        self.model = str(self.args.get("served_model_name") or "")
        self.timings = server.startup_timings or {}

    # ------------------------------------------------------------ which

    def served(self, family: dict) -> bool:
        if family.get("declared_if") and not self._guard(family["declared_if"]):
            return False
        return any(
            writer["method"] in WRITERS
            and (writer["guard"] is None or self._guard(writer["guard"]))
            for writer in family.get("written_by") or []
        )

    def _guard(self, guard: str) -> bool:
        """The writes' `if` tests the sim can answer; anything else is false for a plain run."""
        if guard.startswith("self.enable_"):
            return bool(self.args.get(guard.removeprefix("self.")))
        if guard == "spec_verify_ct > 0":
            return self.stats.spec_verify_total > 0
        return False  # cached tokens, aborts, grammar, PD transfer: none in the sim's runs

    # ------------------------------------------------------------ series

    def family(self, family: dict) -> list[str]:
        name, kind = family["name"], family["type"]
        shown = name.removesuffix("_total") + "_total" if kind == "counter" else name
        out = [f"# HELP {shown} {family.get('help') or ''}", f"# TYPE {shown} {kind}"]
        for labels, value in self._series(family):
            if kind == "histogram":
                out += _histogram(shown, labels, value, family.get("buckets") or DEFAULT_BUCKETS)
            else:
                out.append(f"{shown}{_labels(labels)} {float(value)}")
        return out

    def _series(self, family: dict) -> list[tuple[dict, object]]:
        name = family["name"]
        common = COMMON.get(family.get("owner"), ()) if family.get("common_labels") else ()
        base = {label: self._common(label) for label in common}
        if family.get("gauge_histogram"):
            bounds = family.get("buckets") or [1]
            edges = [0, *bounds]
            return [
                ({**base, "gt": str(lower), "le": str(upper)}, 0)
                for lower, upper in zip(edges, edges[1:], strict=False)
            ]
        extra = family.get("labels") or []
        if "is_streaming" in extra:
            value = self._value(name)
            return [
                ({**base, "is_streaming": "false"}, value),
                ({**base, "is_streaming": "true"}, 0),
            ]
        if "mode" in extra:
            return [
                ({**base, "mode": mode}, self._value(name, mode)) for mode in MODES.get(name, ())
            ]
        if "phase" in extra:
            phases = STARTUP_PHASES if name == "sglang:startup_time_seconds" else GRAPH_PHASES
            return [({**base, "phase": phase}, self._value(name, phase)) for phase in phases]
        if "stage" in extra:
            return [({**base, "stage": stage}, self._value(name)) for stage in STAGES]
        if family.get("multiprocess_mode") in ("all", "liveall"):
            base["pid"] = str(os.getpid())  # prometheus_client's per-process gauge series
        if "component" in extra:
            cpu = time.process_time()
            return [
                ({"component": "tokenizer"}, cpu * 0.85),
                ({"component": "detokenizer"}, cpu * 0.15),
            ]
        if "endpoint" in extra:
            return self._http(name)
        return [(base, self._value(name))]

    def _common(self, label: str) -> str:
        return {"engine_type": "unified", "model_name": self.model}.get(label, "0")

    def _http(self, name: str) -> list[tuple[dict, object]]:
        http = self.server.http
        if http is None:
            return []
        if name == "sglang:http_responses_total":
            return [
                ({"endpoint": path, "method": method, "status_code": str(status)}, count)
                for (method, path, status), count in http.answered.items()
            ]
        counts: dict[tuple[str, str], int] = {}
        for (method, path, _), count in http.answered.items():
            counts[method, path] = counts.get((method, path), 0) + count
        if name == "sglang:http_requests_active":
            counts = {key: http.active.get(key, 0) for key in {*counts, *http.active}}
        return [
            ({"endpoint": path, "method": method}, count)
            for (method, path), count in counts.items()
        ]

    def _value(self, name: str, part: str | None = None) -> object:
        """What the engine knows for a family (a histogram: (count, sum)); 0 where it knows
        nothing."""
        stats, engine, args = self.stats, self.engine, self.args
        used, total = stats.used_tokens, engine.max_total_tokens
        graphs = self.timings.get("cuda_graph") or {}
        key = name.removeprefix("sglang:").removesuffix("_total")
        known = {
            "num_running_reqs": stats.running,
            "num_queue_reqs": stats.queued,
            "token_usage": stats.token_usage,
            "full_token_usage": stats.token_usage,
            "gen_throughput": stats.gen_throughput,
            "spec_accept_length": stats.accept_len,
            "num_used_tokens": used,
            "kv_used_tokens": used,
            "kv_available_tokens": max(0, total - used),
            "decode_sum_seq_lens": used,
            "max_total_num_tokens": total,
            "num_pages": total // int(args.get("page_size") or 1),
            "page_size": int(args.get("page_size") or 1),
            "context_len": int(args.get("context_length") or 0),
            "is_cuda_graph": 0 if args.get("disable_cuda_graph") else 1,
            "spec_num_draft_tokens": int(args.get("speculative_num_draft_tokens") or 0),
            "spec_num_steps": int(args.get("speculative_num_steps") or 0),
            "prompt_tokens": stats.prompt_tokens_total,
            "generation_tokens": stats.generation_tokens_total,
            "num_requests": stats.requests_total,
            "spec_verify_calls": stats.spec_verify_total,
            "prompt_tokens_histogram": (stats.requests_total, stats.prompt_tokens_total),
            "uncached_prompt_tokens_histogram": (stats.requests_total, stats.prompt_tokens_total),
            "generation_tokens_histogram": (stats.requests_total, stats.generation_tokens_total),
        }
        if part is None:
            return known.get(key, 0)
        if key == "realtime_tokens":
            return {
                "prefill_compute": stats.prompt_tokens_total,
                "decode": stats.generation_tokens_total,
            }.get(part, 0)
        if key == "cuda_graph_passes":
            return stats.spec_verify_total if part == "decode_cuda_graph" else 0
        if key == "startup_time_seconds":
            return self.timings.get(part, 0)
        if key == "startup_cuda_graph_time_seconds":
            return graphs.get(part, 0)
        return 0


def _labels(labels: dict) -> str:
    if not labels:
        return ""
    return "{" + ",".join(f'{key}="{value}"' for key, value in sorted(labels.items())) + "}"


def _histogram(name: str, labels: dict, value: object, buckets) -> list[str]:
    """Cumulative buckets; the sim knows a count and a sum, so every observation sits at the
    mean."""
    count, total = value if isinstance(value, tuple) else (0, 0.0)
    mean = total / count if count else 0.0
    out = []
    for bound in [*buckets, "+Inf"]:
        inside = count if bound == "+Inf" or mean <= float(bound) else 0
        upper_bound = bound if bound == "+Inf" else float(bound)
        out.append(f"{name}_bucket{_labels({**labels, 'le': upper_bound})} {float(inside)}")
    out.append(f"{name}_sum{_labels(labels)} {float(total)}")
    out.append(f"{name}_count{_labels(labels)} {float(count)}")
    return out
