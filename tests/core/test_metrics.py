"""SGLang's /metrics page, parsed by prometheus-client's parser into one record."""

from __future__ import annotations

from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from sglconsole.core.metrics import parse_metrics

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
# the shape of SGLang 0.5.23's page in multiprocess mode (metrics_collector.py): gauges carry the
# scheduler's labels (plus pid), counters end in _total, histograms come as buckets
PAGE = (FIXTURES / "sglang-metrics-page.txt").read_text(encoding="utf-8")


def test_ranks_are_summed_usage_takes_the_fullest_accept_length_the_mean():
    m = parse_metrics(PAGE)
    assert m is not None
    assert (m.running_req, m.queue_req, m.gen_throughput) == (5.0, 1.0, 120.0)
    assert m.token_usage == 0.31
    assert abs(m.accept_len - 3.2) < 1e-9
    assert m.generation_tokens_total == 123456.0
    assert m.other["time_to_first_token_seconds_count"] == 12.0
    assert not any(name.endswith("_bucket") for name in m.other)
    assert "python_gc_objects_collected_total" not in m.other  # only SGLang's own


def test_a_page_without_sglang_samples_or_not_prometheus_text_is_none():
    assert parse_metrics("") is None
    assert parse_metrics("<html>502 Bad Gateway</html>") is None
    assert parse_metrics("# TYPE up gauge\nup 1\n") is None


def test_a_page_cut_short_keeps_what_was_read():
    m = parse_metrics(
        PAGE[: PAGE.index("# HELP sglang:token_usage")] + 'sglang:token_usage{model_name="x'
    )
    assert m is not None and m.running_req == 5.0


@given(st.text(max_size=300))
def test_any_text_never_raises(text):
    parse_metrics(text)
    parse_metrics(PAGE[: len(text)] + text)
