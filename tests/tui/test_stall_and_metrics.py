"""An idle server that does not answer is not STALLED; /metrics gives tok/s by its counters,
never a frozen gauge.
The /metrics pages are the real ones a SGLang 0.5.12 server wrote on an H200 (tests/fixtures)."""

from __future__ import annotations

from sglconsole.core.metrics import parse_metrics
from sglconsole.state.fleet import Sample, Status
from tests.conftest import FIXTURES
from tests.tui.test_one_view import T0, one_server_fleet, process, run

REAL = FIXTURES / "real-sglang-0.5.12-h200"


def page(name: str):
    return parse_metrics((REAL / name / "metrics.txt").read_text())


def test_idle_metrics_page_gives_no_tok_s_from_its_frozen_gauge():
    idle = page("idle")
    assert idle.gen_throughput > 500 and idle.running_req == 2  # what the real idle server exported
    fleet = one_server_fleet()
    server = fleet.hosts["h"].servers[30000]
    run(fleet, process(1, T0), T0 + 1)
    server.metrics_before, server.metrics_before_at = idle, T0 + 10
    server.metrics, server.metrics_at = idle, T0 + 15  # the same counter five seconds later
    fleet.publish("h", T0 + 16)
    assert (server.view.tok_s, server.view.tok_s_source, server.view.load) == (0.0, "metrics", None)


def test_metrics_tok_s_is_the_counters_rate():
    fleet = one_server_fleet()
    server = fleet.hosts["h"].servers[30000]
    run(fleet, process(1, T0), T0 + 1)
    before = page("under-load")
    after = parse_metrics(
        (REAL / "under-load" / "metrics.txt")
        .read_text()
        .replace(
            'generation_tokens_total{engine_type="unified",model_name="/opt/tiny"} 536.0',
            'generation_tokens_total{engine_type="unified",model_name="/opt/tiny"} 1036.0',
        )
    )
    server.metrics_before, server.metrics_before_at = before, T0 + 10
    server.metrics, server.metrics_at = after, T0 + 15
    fleet.publish("h", T0 + 16)
    assert server.view.tok_s == 100.0 and server.view.load.source == "metrics"
    assert server.view.load.accept_len == 6.75


def test_an_idle_server_that_does_not_answer_is_not_called_stalled():
    fleet = one_server_fleet()
    server = fleet.hosts["h"].servers[30000]
    run(fleet, process(1, T0), T0 + 60)
    server.answered_at = T0 + 60
    server.history.append(
        Sample(
            time=T0 + 61,
            gen_throughput=80.0,
            accept_len=2.0,
            accept_rate=0.5,
            running_req=0,
            queue_req=0,
            token_usage=0.0,
            after_idle=False,
        )
    )
    server.health = "no HTTP answer"
    fleet.publish("h", T0 + 200)
    assert server.status != Status.STALLED
