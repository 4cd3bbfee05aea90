"""Runs of status polls in a real SGLang 0.5.17 log (H200) are told in one line each; every other
line stays, and so does a poll that failed."""

from __future__ import annotations

from pathlib import Path

from sglconsole.core.status_polls import PollRun, condense

REAL = Path(__file__).parent.parent / "fixtures" / "real-sglang-0.5.17-h200"
LINES = (REAL / "sglang-30000.log").read_text(encoding="utf-8", errors="replace").split("\n")
# the server's first minute of serving: the console's polls, a client's requests, a probe
READY = next(i for i, line in enumerate(LINES) if "Uvicorn running on" in line)
WINDOW = LINES[READY : READY + 60]


def runs(items):
    return [item for item in items if isinstance(item, PollRun)]


def test_every_line_is_kept_as_it_is_or_inside_one_run():
    items = condense(LINES)
    unrolled = [
        line for item in items for line in (item.lines if isinstance(item, PollRun) else [item])
    ]
    assert unrolled == LINES
    assert len(runs(items)) > 20
    assert len(items) < len(LINES) - 100


def test_a_run_of_polls_and_the_deprecation_notes_they_cause_is_one_summary():
    run = max(runs(condense(WINDOW)), key=lambda r: len(r.lines))
    assert (
        run.summary()
        == "7 status polls (GET /ready, /get_model_info, /v1/models, /server_info, …), "
        "2 “deprecated” notes"
    )
    assert any("Endpoint '/get_load' is deprecated" in line for line in run.lines)
    assert sum(count for _, count in run.counts) == run.polls == 7


def test_what_is_not_a_successful_status_poll_stays_in_the_log():
    kept = [item for item in condense(WINDOW) if isinstance(item, str)]
    shown = "\n".join(kept)
    for line in (
        '"GET /health HTTP/1.1" 503 Service Unavailable',  # not ready yet: worth seeing
        '"POST /generate HTTP/1.1" 200 OK',  # a client's request
        '"GET /health_generate HTTP/1.1" 200 OK',  # a restore's readiness generation
        '"GET /version HTTP/1.1" 404 Not Found',  # not one the console asks
        "The server is fired up and ready to roll!",
        "Prefill batch, #new-seq: 1",
        "FastAPIDeprecationWarning: ORJSONResponse is deprecated",
    ):
        assert line in shown, line
    assert not any('"GET /metrics HTTP/1.1" 200' in line for line in kept)
    assert not any("Endpoint '/get_server_info' is deprecated" in line for line in kept)


def test_a_summary_counts_each_path_most_first():
    lines = [
        '[2026-12-04 15:10:00] INFO:     127.0.0.1:40001 - "GET /v1/loads HTTP/1.1" 200 OK',
        '[2026-12-04 15:10:00] INFO:     127.0.0.1:40002 - "GET /health HTTP/1.1" 200 OK',
        '[2026-12-04 15:10:01] INFO:     127.0.0.1:40003 - "GET /v1/loads HTTP/1.1" 200 OK',
        '[2026-12-04 15:10:01] INFO:     127.0.0.1:40004 - "GET /ready HTTP/1.1" 404 Not Found',
    ]
    (run,) = condense(lines)
    assert run.summary() == "4 status polls (GET /v1/loads ×2, /health, /ready)"


def test_a_tail_read_a_few_lines_at_a_time_tells_the_same_runs():
    whole = condense(WINDOW)
    for cut in range(len(WINDOW) + 1):
        first = condense(WINDOW[:cut])
        going_on = first.pop() if first and isinstance(first[-1], PollRun) else None
        assert first + condense(WINDOW[cut:], going_on) == whole, cut
