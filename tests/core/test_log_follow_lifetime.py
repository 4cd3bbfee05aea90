"""The host's log follower finds the current lifetime's start whatever the log's size: a server
wedged after hours of decode lines must not look like one still starting (a real 0.5.17's ready
line was 1,320 lines back, past the 64 KiB tail read at connect)."""

from __future__ import annotations

import json

from sglconsole.remote.agents import log_follow
from tests.conftest import FIXTURES

REAL = (FIXTURES / "real-sglang-0.5.17-h200" / "sglang-30000.log").read_bytes()
# up to the last lifetime (E, killed at start): R, restored by sglconsole, is then the newest
UNTIL_R = REAL[: REAL.rindex(b"/opt/sglvenv/lib/python3.12/site-packages/sglang/launch_server.py")]
DECODE = (
    b"[2026-12-04 15:20:00] Decode batch, #running-req: 16, #token: 2458, token usage: 0.01, "
    b"accept len: 1.62, accept rate: 0.20, cuda graph: True, gen throughput (token/s): 3394.10, "
    b"#queue-req: 0\n"
)


def follow(path, capsys) -> list[dict]:
    follower = log_follow.Follow(str(path), None, None, 65536)
    follower.poll()
    return [json.loads(line) for line in capsys.readouterr().out.splitlines()]


def read_lines(messages: list[dict]) -> list[str]:
    return [line for m in messages if m.get("t") == "log" for line in m["lines"]]


def test_a_long_lifetime_sends_its_start_up_ahead_of_the_tail(tmp_path, capsys):
    log = tmp_path / "sglang.log"
    log.write_bytes(UNTIL_R + DECODE * 4000)  # ~900 KiB of decode lines after R's start
    lines = read_lines(follow(log, capsys))
    assert any("server_args=ServerArgs(" in line for line in lines[:3])
    started = [i for i, line in enumerate(lines) if "Started server process [" in line]
    ready = [i for i, line in enumerate(lines) if "fired up and ready to roll" in line]
    assert "[7583]" in lines[started[-1]] and ready and ready[-1] > started[-1]
    assert not any("[552]" in line or "[6395]" in line for line in lines)  # earlier lifetimes
    assert lines[-1] == DECODE.decode().rstrip("\n")
    assert sum(len(line) for line in lines) < 400_000  # the head and the tail, never the whole


def test_a_lifetime_start_near_the_tail_is_read_from_there(tmp_path, capsys):
    log = tmp_path / "sglang.log"
    log.write_bytes(UNTIL_R + DECODE * 600)  # R's start ~150 KiB back: past the 64 KiB tail
    messages = follow(log, capsys)
    lines = read_lines(messages)
    assert not any(m.get("head") for m in messages)  # one read, from R's first line on
    assert "server_args=ServerArgs(" in lines[0] and "[2026-12-04 15:13:54]" in lines[0]


def test_a_resumed_follow_reads_from_its_offset(tmp_path, capsys):
    log = tmp_path / "sglang.log"
    log.write_bytes(REAL + DECODE * 4000)
    size = log.stat().st_size
    follower = log_follow.Follow(str(log), log.stat().st_ino, size - len(DECODE), 65536)
    follower.poll()
    messages = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert read_lines(messages) == [DECODE.decode().rstrip("\n")]
