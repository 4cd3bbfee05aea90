"""SGLang's /metrics page, parsed by prometheus-client's parser into one record."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from sglconsole.core.metrics import parse_metrics

# the shape of SGLang 0.5.23's page in multiprocess mode (metrics_collector.py): gauges carry the
# scheduler's labels (plus pid), counters end in _total, histograms come as buckets
PAGE = """\
# HELP sglang:num_running_reqs The number of running requests.
# TYPE sglang:num_running_reqs gauge
sglang:num_running_reqs{engine_type="unified",model_name="Qwen3-8B",pid="412",pp_rank="0",tp_rank="0"} 3.0
sglang:num_running_reqs{engine_type="unified",model_name="Qwen3-8B",pid="413",pp_rank="0",tp_rank="0",dp_rank="1"} 2.0
# HELP sglang:num_queue_reqs The number of requests in the waiting queue.
# TYPE sglang:num_queue_reqs gauge
sglang:num_queue_reqs{engine_type="unified",model_name="Qwen3-8B",pid="412",pp_rank="0",tp_rank="0"} 1.0
# HELP sglang:token_usage The token usage.
# TYPE sglang:token_usage gauge
sglang:token_usage{engine_type="unified",model_name="Qwen3-8B",pid="412",pp_rank="0",tp_rank="0"} 0.12
sglang:token_usage{engine_type="unified",model_name="Qwen3-8B",pid="413",pp_rank="0",tp_rank="0",dp_rank="1"} 0.31
# HELP sglang:gen_throughput The generation throughput (token/s).
# TYPE sglang:gen_throughput gauge
sglang:gen_throughput{engine_type="unified",model_name="Qwen3-8B",pid="412",pp_rank="0",tp_rank="0"} 61.5
sglang:gen_throughput{engine_type="unified",model_name="Qwen3-8B",pid="413",pp_rank="0",tp_rank="0",dp_rank="1"} 58.5
# HELP sglang:spec_accept_length The average acceptance length of speculative decoding.
# TYPE sglang:spec_accept_length gauge
sglang:spec_accept_length{engine_type="unified",model_name="Qwen3-8B",pid="412",pp_rank="0",tp_rank="0"} 3.0
sglang:spec_accept_length{engine_type="unified",model_name="Qwen3-8B",pid="413",pp_rank="0",tp_rank="0",dp_rank="1"} 3.4
# HELP sglang:generation_tokens_total Number of generation tokens processed.
# TYPE sglang:generation_tokens_total counter
sglang:generation_tokens_total{model_name="Qwen3-8B"} 123456.0
# HELP sglang:time_to_first_token_seconds Histogram of time to first token in seconds.
# TYPE sglang:time_to_first_token_seconds histogram
sglang:time_to_first_token_seconds_bucket{le="0.1",model_name="Qwen3-8B"} 10.0
sglang:time_to_first_token_seconds_bucket{le="+Inf",model_name="Qwen3-8B"} 12.0
sglang:time_to_first_token_seconds_count{model_name="Qwen3-8B"} 12.0
sglang:time_to_first_token_seconds_sum{model_name="Qwen3-8B"} 0.9
# HELP python_gc_objects_collected_total Objects collected during gc
# TYPE python_gc_objects_collected_total counter
python_gc_objects_collected_total{generation="0"} 2048.0
"""


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
