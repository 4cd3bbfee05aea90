"""The restore's verdict sentence: one speed source per clause, like with like (#31 item 2)."""

from __future__ import annotations

from sglconsole import config
from sglconsole.actions.restore import DecodeStats, compare, describe
from sglconsole.core.probe_result import ProbeResult

# numbers of the run the issue quotes: 2 requests of background load on a restored 27B MTP server
PROFILE = config.Profile(
    args=["--model-path", "/models/Qwen3.6-27B"],
    baseline=config.Baseline(gen_throughput=128.0, concurrency=2, accept_len=3.1),
)
BEFORE = DecodeStats(tok_s=69.4, per_request=34.7, accept_len=1.9, running=2, lines=20)
AFTER = DecodeStats(tok_s=77.9, per_request=38.95, accept_len=3.05, running=2, lines=8)
PROBE = ProbeResult(
    "OK",
    "answer and speed as expected",
    throughput_tok_s=62.7,
    expected_tok_s=64.0,
    accept_len=3.12,
)


def test_the_verdict_speaks_of_the_probe_alone_and_puts_the_live_aggregate_apart():
    sentence = describe(BEFORE, AFTER, PROFILE, PROBE)
    judged, live = sentence.split("; live: ")
    assert judged == (
        "the probe: 62.7 tok/s per request, 1.81x the 34.7 per request before,"
        " at baseline (98% of its 64.0 per request)"
    ), sentence
    assert live == "77.9 tok/s in all at 2 running, accept len 3.05", sentence
    assert "39.0" not in sentence  # the decode lines' own per-request figure


def test_without_a_probe_measurement_the_decode_lines_speak_with_their_own_baseline():
    unmeasured = ProbeResult("OK", "answer as expected")
    sentence = describe(BEFORE, AFTER, PROFILE, unmeasured)
    assert sentence.startswith(
        "its decode lines: 39.0 tok/s per request, 1.12x the 34.7 per request before,"
        " below baseline (61% of its 64.0 per request); live: 77.9"
    ), sentence
    assert compare(PROFILE, AFTER, unmeasured) == [
        "39.0 tok/s per request is under 75% of the baseline's 64.0"
    ]


def test_a_slow_probe_fails_the_compare_by_its_own_figure():
    slow = ProbeResult("SLOW", "slow", throughput_tok_s=30.1, expected_tok_s=64.0, accept_len=3.1)
    assert compare(PROFILE, AFTER, slow) == [
        "30.1 tok/s per request is under 75% of the baseline's 64.0"
    ]
    assert "below baseline (47% of its 64.0 per request)" in describe(BEFORE, AFTER, PROFILE, slow)
