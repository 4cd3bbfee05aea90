"""Prometheus's answers about SGLang's real series (the 0.5.12 H200 capture, with the labels a
scrape adds) and dcgm-exporter's, grouped by hosts.yaml's hosts and ports."""

from __future__ import annotations

from pathlib import Path

from prometheus_client.parser import text_string_to_metric_families

from sglconsole import config
from sglconsole.config.schema import SourceLabels
from sglconsole.core.metrics import NAMES, PREFIX, combine, parse_metrics
from sglconsole.remote.prometheus import sglang_series as prom_series
from sglconsole.remote.prometheus.sglang_feed import dcgm_gpus
from sglconsole.remote.prometheus.sglang_series import group, split_address

REAL = Path(__file__).parent / "fixtures" / "real-sglang-0.5.12-h200"
HOSTS = """
hosts:
  gpu1:
    address: 10.0.0.5
    servers: [{port: 30000, profile: p}]
  ct7:
    address: pve.example
    exec_prefix: [pct, exec, "7", "--"]
    servers: [{port: 30000, profile: p, http_address: 10.0.7.7}]
profiles:
  p: {args: [--model-path, /m]}
"""


def load(tmp_path):
    path = tmp_path / "hosts.yaml"
    path.write_text(HOSTS)
    return config.load(path)


def vector(page: str, **extra: str) -> list[dict]:
    """The page's samples as Prometheus answers `{__name__=~"sglang:(...)"}`, with `extra`
    labels (Prometheus's instance and job)."""
    wanted = {PREFIX + name for name in NAMES}
    out = []
    for family in text_string_to_metric_families(page):
        for sample in family.samples:
            if sample.name in wanted:
                labels = {"__name__": sample.name, **sample.labels, **extra}
                out.append({"metric": labels, "value": [1.0, repr(float(sample.value))]})
    return out


def test_the_real_page_read_through_prometheus_is_the_page_read_over_http(tmp_path):
    page = (REAL / "under-load" / "metrics.txt").read_text()
    series = vector(page, instance="10.0.0.5:30000", job="sglang")
    assert {s["metric"]["__name__"] for s in series} >= {
        "sglang:gen_throughput",
        "sglang:num_running_reqs",
        "sglang:num_queue_reqs",
        "sglang:spec_accept_length",
        "sglang:token_usage",
        "sglang:generation_tokens_total",
    }
    up = [{"metric": {"__name__": "up", "instance": "10.0.0.5:30000"}, "value": [1.0, "1"]}]
    hosts, unknown = group(load(tmp_path), SourceLabels(), sglang=series, rates=[], up=up, gpus=[])
    assert unknown == set() and set(hosts) == {"gpu1"}
    scraped = hosts["gpu1"].servers[30000]
    assert scraped.up is True and scraped.address == "10.0.0.5:30000"
    read = combine(scraped.samples)
    direct = parse_metrics(page)
    for field in ("running_req", "queue_req", "accept_len", "token_usage", "accept_rate"):
        assert getattr(read, field) == getattr(direct, field), field
    assert read.accept_len == 6.75 and read.generation_tokens_total == 536.0


def test_ranks_are_combined_by_the_same_rule(tmp_path):
    page = (REAL / "under-load" / "metrics.txt").read_text()
    ranks = vector(page, instance="10.0.0.5:30000") + [
        {**s, "metric": {**s["metric"], "tp_rank": "1"}}
        for s in vector(page, instance="10.0.0.5:30000")
        if "tp_rank" in s["metric"]
    ]
    hosts, _ = group(load(tmp_path), SourceLabels(), sglang=ranks, rates=[], up=[], gpus=[])
    read = combine(hosts["gpu1"].servers[30000].samples)
    assert read.running_req == 2.0  # summed over ranks
    assert read.accept_len == 6.75  # the mean
    assert read.generation_tokens_total == 536.0  # counters carry no rank labels: once


def test_hosts_are_found_by_name_address_or_http_address(tmp_path):
    cfg = load(tmp_path)
    series = [
        {"metric": {"__name__": "up", "instance": i}, "value": [1.0, "1"]}
        for i in ("GPU1:30000", "10.0.7.7:30000", "pve.example:30000", "elsewhere:30000")
    ]
    hosts, _ = group(cfg, SourceLabels(), sglang=[], rates=[], up=series, gpus=[])
    assert set(hosts) == {"gpu1", "ct7"}
    # an exporter or node_exporter on the host is no SGLang server
    other = [{"metric": {"__name__": "up", "instance": "10.0.0.5:9100"}, "value": [1.0, "1"]}]
    hosts, _ = group(cfg, SourceLabels(), sglang=[], rates=[], up=other, gpus=[])
    assert hosts == {}


def test_unknown_instances_are_reported_not_shown(tmp_path):
    series = vector(
        (REAL / "idle" / "metrics.txt").read_text(), instance="10.9.9.9:30000", job="sglang"
    )
    hosts, unknown = group(load(tmp_path), SourceLabels(), sglang=series, rates=[], up=[], gpus=[])
    assert hosts == {} and unknown == {"10.9.9.9:30000"}


def test_labels_can_say_host_and_port(tmp_path):
    """Relabelled scrapes (Kubernetes, file_sd): the host and port in labels of their own."""
    labels = SourceLabels(host="node", port="sglang_port")
    series = [
        {
            "metric": {
                "__name__": "sglang:num_running_reqs",
                "instance": "10.244.1.9:8080",
                "node": "gpu1",
                "sglang_port": "30000",
            },
            "value": [1.0, "3"],
        }
    ]
    rates = [{**series[0], "value": [1.0, "41.5"]}]
    hosts, _ = group(load(tmp_path), labels, sglang=series, rates=rates, up=[], gpus=[])
    scraped = hosts["gpu1"].servers[30000]
    assert scraped.samples == {"num_running_reqs": [3.0]} and scraped.rate == 41.5


def test_dcgm_exporter_series_are_the_hosts_gpus(tmp_path):
    def dcgm(name: str, gpu: str, value: str, **labels) -> dict:
        metric = {
            "__name__": name,
            "gpu": gpu,
            "UUID": f"GPU-{gpu}",
            "device": f"nvidia{gpu}",
            "modelName": "NVIDIA H200",
            "Hostname": "gpu1",
            "instance": "10.0.0.5:9400",
            "job": "dcgm",
            **labels,
        }
        return {"metric": metric, "value": [1.0, value]}

    series = [
        dcgm("DCGM_FI_DEV_GPU_UTIL", "0", "87"),
        dcgm("DCGM_FI_DEV_FB_USED", "0", "120000"),
        dcgm("DCGM_FI_DEV_FB_FREE", "0", "23771"),
        dcgm("DCGM_FI_DEV_GPU_TEMP", "0", "51"),
        dcgm("DCGM_FI_DEV_POWER_USAGE", "0", "412.5"),
        dcgm("DCGM_FI_DEV_GPU_UTIL", "1", "0"),
    ]
    cfg = load(tmp_path)
    hosts, _ = group(cfg, SourceLabels(), sglang=[], rates=[], up=[], gpus=series)
    gpus = dcgm_gpus(hosts["gpu1"])
    assert [g.index for g in gpus] == [0, 1]
    first = gpus[0]
    assert (first.name, first.uuid, first.util_gpu) == ("NVIDIA H200", "GPU-0", 87)
    assert (first.mem_used_mib, first.mem_total_mib, first.temperature_c) == (120000, 143771, 51)
    assert first.power_draw_w == 412.5 and gpus[1].mem_total_mib is None
    by_hostname = SourceLabels(gpu_host="Hostname")
    hosts, _ = group(cfg, by_hostname, sglang=[], rates=[], up=[], gpus=series)
    assert set(hosts) == {"gpu1"}


def test_addresses_split_like_prometheus_writes_them():
    assert split_address("10.0.0.5:30000") == ("10.0.0.5", 30000)
    assert split_address("[fe80::1]:30000") == ("fe80::1", 30000)
    assert split_address("gpu1") == ("gpu1", None)
    assert split_address("fe80::1") == ("fe80::1", None)


def test_few_queries_whatever_the_fleet():
    assert prom_series.SGLANG_QUERY.startswith('{__name__=~"sglang:(')
    assert "gen_throughput" in prom_series.SGLANG_QUERY
    assert prom_series.rate_query(60) == "irate(sglang:generation_tokens_total[60s])"


def test_slow_is_derived_from_prometheus_by_the_same_rules(tmp_path):
    """Scrapes that generated tokens are samples like decode lines: a server under its baseline
    for a minute is SLOW with no exporter (state.status's rule, fed by remote.prom_sglang)."""
    from sglconsole.core.processes import ProcessView
    from sglconsole.remote.prometheus.sglang_feed import feed_server
    from sglconsole.remote.prometheus.sglang_series import Scraped
    from sglconsole.state.fleet import FleetState
    from sglconsole.state.model import Status
    from sglconsole.state.server_view import derive_view

    path = tmp_path / "hosts.yaml"
    path.write_text(
        HOSTS.replace(
            "p: {args: [--model-path, /m]}",
            "p: {args: [--model-path, /m], baseline: {gen_throughput: 100, concurrency: 2}}",
        )
    )
    fleet = FleetState(config.load(path))
    host, server = fleet.hosts["gpu1"], fleet.server("gpu1", 30000)
    host.reachable, host.view = True, ProcessView((), (), (), False)
    began, views = 1_800_000_000.0, []
    for second in range(8):
        samples = {
            "num_running_reqs": [2.0],
            "num_queue_reqs": [0.0],
            "generation_tokens_total": [1000.0 + 40 * second],
            "spec_accept_length": [2.5],
        }
        scraped = Scraped("10.0.0.5:30000", True, samples, rate=40.0)
        feed_server(server, scraped, began + second, "http://p")
        views.append(derive_view(server, host, began + second, second))
    assert views[0].status == Status.UP and views[0].pid is None
    assert views[-1].status == Status.SLOW, views[-1]
    assert "40.0 tok/s vs 100 baseline" in views[-1].reason
    assert views[-1].tok_s == 40.0 and views[-1].tok_s_source == "prometheus"
    assert views[-1].load.accept_len == 2.5 and views[-1].load.source == "prometheus"
    # a counter that went back: a new process, its numbers start empty
    restarted = Scraped("10.0.0.5:30000", True, {"generation_tokens_total": [5.0]}, rate=0.0)
    feed_server(server, restarted, began + 9, "http://p")
    assert derive_view(server, host, began + 9, 9).status == Status.UP and not server.history


def test_looping_is_derived_from_a_pinned_accept_rate(tmp_path):
    from sglconsole.core.processes import ProcessView
    from sglconsole.remote.prometheus.sglang_feed import feed_server
    from sglconsole.remote.prometheus.sglang_series import Scraped
    from sglconsole.state.fleet import FleetState
    from sglconsole.state.model import Status
    from sglconsole.state.server_view import derive_view

    fleet = FleetState(load(tmp_path))
    host, server = fleet.hosts["gpu1"], fleet.server("gpu1", 30000)
    host.reachable, host.view = True, ProcessView((), (), (), False)
    for second in range(8):
        samples = {
            "num_running_reqs": [1.0],
            "generation_tokens_total": [100.0 * second],
            "spec_accept_rate": [1.0],  # SGLang 0.5.12 exports it (the real page has it)
        }
        feed_server(server, Scraped("10.0.0.5:30000", True, samples, rate=100.0), second, "u")
    assert derive_view(server, host, 8.0, 1).status == Status.LOOPING


def test_up_and_sglang_series_are_one_evaluation():
    """Asked apart, a scrape that failed between the answers showed a server up with none of its
    series (stale): UP with its numbers unknown. One query answers both; splitting its answer
    never raises on an odd entry (it stays with the sglang series, as before)."""
    query = prom_series.SGLANG_AND_UP_QUERY
    assert query.startswith('{__name__=~"up|sglang:(') and "num_running_reqs" in query
    up = {"metric": {"__name__": "up", "instance": "h:30000"}, "value": [1, "1"]}
    running = {"metric": {"__name__": "sglang:num_running_reqs"}, "value": [1, "2"]}
    odd = ["not a series", {"metric": None}]
    assert prom_series.split_up([up, running, *odd]) == ([running, *odd], [up])
