"""Which numbers belong to which process, and which still say something about now, on the text a
real SGLang 0.5.17 wrote on an H200 (tests/fixtures/real-sglang-0.5.17-h200, four lifetimes
appended to one log; launches.txt names their PIDs)."""

from __future__ import annotations

import json

from sglconsole.core.decode_lines import DECODE_CURRENT_MAX_S, DECODE_CURRENT_MIN_S, is_current
from sglconsole.core.log_owner import LogOwner, process_decode_records
from sglconsole.core.server_load import GET_LOAD, V1_LOADS, RequestLoad, parse_load
from tests.conftest import FIXTURES

REAL = FIXTURES / "real-sglang-0.5.17-h200"
LINES = (REAL / "sglang-30000.log").read_text(encoding="utf-8", errors="replace").splitlines()
B, C, R, E = 552, 6395, 7583, 8791  # launches.txt: the profile, drifted, restored, killed at start


def test_each_lifetime_owns_only_its_own_decode_lines():
    owned = {pid: process_decode_records(LINES, pid, 0.0) for pid in (B, C, R, E)}
    assert len(owned[B]) == 102 and owned[B][-1].gen_throughput == 417.44
    # C, R and E never served: the tail's decode lines are B's, never theirs (restore printed
    # B's 251 tok/s per request for C, capture wrote B's 3,394 tok/s as R's baseline)
    assert owned[C] == owned[R] == owned[E] == []


def test_a_lifetime_start_ends_the_previous_writer():
    owner = LogOwner()
    writers = [owner.feed(line) for line in LINES]
    started_c = next(i for i, line in enumerate(LINES) if "Started server process [6395]" in line)
    args_c = max(i for i, line in enumerate(LINES[:started_c]) if "server_args=ServerArgs(" in line)
    assert writers[args_c - 1] == B and writers[args_c] is None and writers[started_c] == C


def test_a_tail_without_markers_counts_by_time():
    decode = [line for line in LINES if "Decode batch" in line]
    late = process_decode_records(decode, B, 0.0)
    assert len(late) == len(decode)
    stamp = late[-1].time.timestamp()
    assert process_decode_records(decode, B, stamp + 5) == []


def test_a_decode_line_ages_out():
    # the real idle case: 417 tok/s, 1 running, shown a minute after the last request
    assert is_current(1000.0, 999.0, 1000.0 + DECODE_CURRENT_MIN_S)
    assert not is_current(1000.0, 999.0, 1000.0 + DECODE_CURRENT_MIN_S + 1)
    assert is_current(1000.0, 980.0, 1039.0)  # a slow server's lines are further apart
    assert not is_current(1000.0, 900.0, 1000.0 + DECODE_CURRENT_MAX_S + 1)


def test_load_from_the_real_get_load_bodies():
    def body(case: str):
        return json.loads((REAL / case / "get_load.txt").read_text())

    assert parse_load(GET_LOAD, body("idle")) == RequestLoad(0, 0, GET_LOAD)
    assert parse_load(GET_LOAD, body("stall-under-load")) == RequestLoad(16, 0, GET_LOAD)


def test_v1_loads_omits_zero_counts_and_anything_else_is_unknown():
    busy = {"loads": [{"dp_rank": 0, "num_running_reqs": 3, "num_waiting_reqs": 2}]}
    idle = {"timestamp": 1.0, "loads": [{"dp_rank": 0}]}  # msgspec omit_defaults
    assert parse_load(V1_LOADS, busy) == RequestLoad(3, 2, V1_LOADS)
    assert parse_load(V1_LOADS, idle) == RequestLoad(0, 0, V1_LOADS)
    for odd in ({"detail": "Not Found"}, {"loads": []}, [], "garbage", None, {"loads": [7]}):
        assert parse_load(V1_LOADS, odd) is None, odd
        assert parse_load(GET_LOAD, odd) is None, odd
    assert parse_load(V1_LOADS, {"loads": [{"dp_rank": 0, "num_running_reqs": "x"}]}) is None
