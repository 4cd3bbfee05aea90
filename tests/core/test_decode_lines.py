"""Which decode lines count has one home (core.decode_lines): `log-stats`, the live state (status,
SLOW, views), restore and capture, and bench's level window leave out the same lines. On the real
log of three SGLang 0.5.12 lifetimes (tests/fixtures/real-sglang-0.5.12-h200): pid 521 wrote a
line at 16 running 117 s after its last one at 1 running, whose 5.47 tok/s spans the pause."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

import sglconsole
from sglconsole.actions.restore import stats_of
from sglconsole.bench import decode
from sglconsole.core import decode_lines
from sglconsole.core.decode_lines import IDLE_GAP_S, counted, counts, decode_speed
from sglconsole.core.log_owner import process_decode_records
from sglconsole.core.log_stats import summarize
from sglconsole.core.sglang_log import parse_line
from sglconsole.state.ingest import take_line
from sglconsole.state.model import ServerState
from tests.conftest import FIXTURES

# bytes, split on \n only: the progress bars hold bare \r, which read_text() would turn into lines
LOG = (FIXTURES / "real-sglang-0.5.12-h200" / "sglang-30000.log").read_bytes().decode().split("\n")
AFTER_PAUSE = 5.47  # tok/s of pid 521's line at 16:47:53, 117 s after its line at 16:45:56


def decode_records(lines: list[str]):
    return [r for r in map(parse_line, lines) if r is not None and r.kind == "decode"]


def test_every_reader_counts_the_same_lines_of_a_real_log():
    rule = [r.gen_throughput for r in counted(decode_records(LOG))]
    assert AFTER_PAUSE not in rule and rule  # the first after idle is left out...

    stats = summarize(LOG)  # log-stats
    assert stats.decode_used == len(rule) and stats.gen_throughput.n == len(rule)

    server = ServerState("h", 30000, None, None, None)  # the monitor's path: status, SLOW, views
    for line in LOG:
        take_line(server, line, 0.0)
    live = [s.gen_throughput for s in server.history if counts(s, s.after_idle)]
    assert live == rule

    # restore's before/after and capture's baseline: pid 521's own lines
    own = counted(process_decode_records(LOG, 521, 0.0))
    before = stats_of(LOG, 521, 0.0)
    assert before.lines == len(own) == 6 and AFTER_PAUSE not in [r.gen_throughput for r in own]
    assert before.tok_s == pytest.approx((584.0 + 1060.38) / 2)  # ...never dilutes the median


def test_a_busy_line_after_the_idle_gap_is_left_out_by_each_rank():
    def line(second: int, rank: str, running: int, tok_s: float) -> str:
        return (
            f"[2026-12-05 10:{second // 60:02d}:{second % 60:02d} {rank}] Decode batch, "
            f"#running-req: {running}, #token: 900, token usage: 0.01, cuda graph: True, "
            f"gen throughput (token/s): {tok_s:.2f}, #queue-req: 0"
        )

    gap = int(IDLE_GAP_S)
    lines = [
        line(0, "DP0 TP0", 4, 400.0),
        line(1, "DP1 TP1", 4, 401.0),
        line(2, "DP0 TP0", 4, 402.0),  # counts: DP0's previous is busy, 2 s before
        line(1 + gap, "DP1 TP1", 4, 403.0),  # exactly the gap after DP1's last: counts
        line(3 + gap, "DP0 TP0", 4, 40.0),  # DP0 paused longer than the gap: its rate spans it
        line(4 + gap, "DP0 TP0", 0, 0.0),  # idle
        line(5 + gap, "DP0 TP0", 4, 30.0),  # the first after an idle line
        line(6 + gap, "DP0 TP0", 4, 404.0),
    ]
    rule = [r.gen_throughput for r in counted(decode_records(lines))]
    assert rule == [402.0, 403.0, 404.0]
    assert summarize(lines).decode_used == 3
    window = decode.summarise(lines)  # bench: the level's full batch, past its first line
    assert window.lines == 2 and window.tok_s == pytest.approx(403.5)


def test_the_baseline_quantity_is_the_median_in_all_at_its_concurrency():
    records = decode_records(
        [
            f"[2026-12-05 10:00:0{i}] Decode batch, #running-req: {running}, #token: 9, "
            f"token usage: 0.01, cuda graph: True, gen throughput (token/s): {tok_s}, #queue-req: 0"
            for i, (running, tok_s) in enumerate([(2, 100.0), (2, 110.0), (4, 300.0), (2, 90.0)])
        ]
    )
    speed = decode_speed(records)
    assert (speed.tok_s, speed.running, speed.lines) == (105.0, 2, 4)
    assert speed.per_request == pytest.approx(52.5)
    assert decode_speed([]).tok_s is None  # nothing read is unknown, never 0


def test_the_idle_gap_and_the_age_of_a_decode_line_are_defined_once():
    package = Path(sglconsole.__file__).parent
    defined = re.compile(r"^(IDLE_GAP_S|DECODE_CURRENT_M(IN|AX)_S)\s*=", re.M)
    homes = {
        str(path.relative_to(package))
        for path in package.rglob("*.py")
        if "sim" not in path.relative_to(package).parts and defined.search(path.read_text())
    }
    assert homes == {"core/decode_lines.py"}
    assert decode_lines.IDLE_GAP_S == 30.0
