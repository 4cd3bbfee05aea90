"""SGLang's own series, read from Prometheus, fed into the fleet's state as the SSH monitor feeds
it: a server Prometheus scrapes runs (a process known by its metrics alone), its page is its
/metrics page (ranks combined by core.metrics), and state.server_view derives its status, tok/s and
load by the same rules as over SSH. What needs argv, logs or a probe (DRIFT, SLOW, LOOPING) comes
from `sglconsole exporter` when Prometheus also scrapes it (remote.prom_exporter)."""

from __future__ import annotations

from dataclasses import replace

from sglconsole.core.decode_lines import after_idle
from sglconsole.core.metrics import ServerMetrics, combine
from sglconsole.core.nvidia_smi import GpuSample
from sglconsole.remote.prometheus.sglang_series import HostReading, Scraped
from sglconsole.state.model import (
    Sample,
    ServerState,
    Status,
    metrics_only_process,
)


def feed_server(server: ServerState, scraped: Scraped | None, now: float, url: str) -> None:
    if scraped is None or (scraped.up is not True and not scraped.samples):
        _gone(server, scraped, url)
        return
    page = combine(scraped.samples)
    if page is not None and scraped.rate is not None:
        page = replace(page, generation_tokens_rate=scraped.rate)
    restarted = (
        page is not None
        and server.metrics is not None
        and (page.generation_tokens_total or 0) < (server.metrics.generation_tokens_total or 0)
    )
    if server.process is None or restarted:  # a counter that went back: a new process
        server.new_process(metrics_only_process(server.port, now))
    server.absent = None
    server.health = "ok" if scraped.up is not False else None
    server.answered_at = now if scraped.up is not False else server.answered_at
    if page is not None:
        server.take_page(page, now)
        _sample(server, page, scraped.rate, now)


def _sample(server: ServerState, page: ServerMetrics, rate: float | None, now: float) -> None:
    """A scrape that generated tokens is what a decode line is over SSH: one sample, so SLOW and
    LOOPING follow the same rules (state.status). Nothing generated, no sample: an idle server
    writes no decode line either (and its gauges are frozen)."""
    before = server.metrics_before
    generated = page.generation_tokens_total
    if rate is None or generated is None or before is None:
        return
    if before.generation_tokens_total is not None and generated <= before.generation_tokens_total:
        return
    last = server.history[-1] if server.history else None
    server.history.append(
        Sample(
            time=now,
            gen_throughput=rate,
            accept_len=page.accept_len,
            accept_rate=page.accept_rate,
            running_req=_int(page.running_req),
            queue_req=_int(page.queue_req),
            token_usage=page.token_usage,
            after_idle=after_idle(last, None if last is None else now - last.time),
            source="prometheus",
        )
    )


def _gone(server: ServerState, scraped: Scraped | None, url: str) -> None:
    server.process_gone()
    server.health = None
    server.metrics = server.metrics_at = server.metrics_before = server.metrics_before_at = None
    if scraped is None:
        server.absent = (Status.UNKNOWN, f"not scraped by Prometheus ({url})")
    else:
        server.absent = (
            Status.DOWN,
            f"Prometheus cannot scrape {scraped.address} (up == 0): not running, not answering"
            " or no --enable-metrics",
        )


def dcgm_gpus(reading: HostReading) -> list[GpuSample]:
    """dcgm-exporter's numbers as the console's GPU samples (total = used + free + reserved where
    it exports FB_RESERVED: its defaults carry no total)."""
    out = []
    for index, values in sorted(reading.gpus.items()):

        def number(key: str, values=values) -> float | None:
            value = values.get(key)
            return value if isinstance(value, float) else None

        used, free = number("used_mib"), number("free_mib")
        total = (
            None if used is None or free is None else used + free + (number("reserved_mib") or 0)
        )
        name, uuid = values.get("name"), values.get("uuid")
        out.append(
            GpuSample(
                index,
                name=name if isinstance(name, str) else None,
                uuid=uuid if isinstance(uuid, str) else None,
                util_gpu=_int(number("util")),
                mem_used_mib=_int(used),
                mem_total_mib=_int(total),
                mem_free_mib=_int(free),
                temperature_c=_int(number("temperature")),
                power_draw_w=number("power"),
            )
        )
    return out


def _int(value: float | None) -> int | None:
    return None if value is None else round(value)
