"""The console's logic without a screen: alerts, gating, batching, tails, recordings, rendering."""

from __future__ import annotations

import sys
from collections import deque
from dataclasses import replace

from rich.text import Text
from textual.theme import BUILTIN_THEMES

from sglconsole.alerts.command import run_alert_command
from sglconsole.alerts.tracker import HOLD_S, AlertTracker, sweep
from sglconsole.core.processes import ProcInfo
from sglconsole.state import json_view
from sglconsole.state.fleet import FleetState, Status
from sglconsole.tui import gating
from sglconsole.tui.coalesce import Dirty
from sglconsole.tui.messages import FleetChanged
from sglconsole.tui.paint.log import log_line
from sglconsole.tui.paint.palette import palette_of
from sglconsole.tui.paint.spark import sparkline
from sglconsole.tui.recorder import Recorder
from sglconsole.tui.replay import Replay, load
from sglconsole.tui.tail import TailCursor
from sglconsole.tui.title import fleet_title, osc_title

PALETTE = palette_of(BUILTIN_THEMES["textual-dark"])


# ------------------------------------------------------------------ alerts


def test_a_flapping_server_alerts_once_and_says_once_that_it_recovered():
    tracker = AlertTracker()
    alerts = [tracker.observe("h", 1, Status.UP, "", 0)]
    now = 0.0
    for _ in range(10):  # SLOW and back, each long enough to count
        for status in (Status.SLOW, Status.UP):
            alerts += [tracker.observe("h", 1, status, "", now + dt) for dt in (0, HOLD_S + 0.1)]
            now += HOLD_S + 1
    fired = [a for a in alerts if a]
    assert [(a.old, a.new) for a in fired] == [(Status.UP, Status.SLOW), (Status.SLOW, Status.UP)]


def test_a_blip_shorter_than_the_hold_time_does_not_alert():
    tracker = AlertTracker()
    tracker.observe("h", 1, Status.UP, "", 0)
    assert tracker.observe("h", 1, Status.DOWN, "", 1) is None
    assert tracker.observe("h", 1, Status.DOWN, "", 1 + HOLD_S / 2) is None
    assert tracker.observe("h", 1, Status.UP, "", 2 + HOLD_S / 2) is None
    assert tracker.observe("h", 1, Status.UP, "", 100) is None


def test_getting_worse_alerts_again_inside_the_quiet_period():
    tracker = AlertTracker()
    tracker.observe("h", 1, Status.UP, "", 0)
    tracker.observe("h", 1, Status.SLOW, "", 1)
    assert tracker.observe("h", 1, Status.SLOW, "slow", 1 + HOLD_S).new == Status.SLOW
    tracker.observe("h", 1, Status.DOWN, "", 10)
    alert = tracker.observe("h", 1, Status.DOWN, "gone", 10 + HOLD_S)
    assert alert is not None and alert.problem and alert.to_json()["to"] == "DOWN"


def test_the_first_status_after_connecting_is_not_news():
    tracker = AlertTracker()
    tracker.observe("h", 1, Status.UNKNOWN, "", 0)
    tracker.observe("h", 1, Status.SLOW, "", 1)
    assert tracker.observe("h", 1, Status.SLOW, "", 1 + HOLD_S) is None


def test_no_alert_while_an_action_works_on_a_server_only_for_where_it_ends(demo_replay):
    """A restore passes STARTING and UP before its probe and baseline checks ran: 'recovered'
    must wait for the verdict (the state the server is in when the action ends)."""
    fleet, tracker = demo_replay.fleet, AlertTracker()
    server = fleet.hosts["ct129"].servers[30000]
    sweep(fleet, tracker, 0)
    assert server.status == Status.SLOW
    server.action = "restoring the proven profile"
    for now, status in ((1, Status.STARTING), (1 + HOLD_S, Status.STARTING), (20, Status.UP)):
        server.view = replace(server.view, status=status)
        assert sweep(fleet, tracker, now) == [] and sweep(fleet, tracker, now + HOLD_S) == []
    server.action = None
    assert sweep(fleet, tracker, 40) == []
    alerts = sweep(fleet, tracker, 40 + HOLD_S)
    assert [(a.target, a.old, a.new) for a in alerts] == [("ct129:30000", Status.SLOW, Status.UP)]


def test_an_unreachable_host_alerts_once_not_once_per_server(demo_replay):
    fleet, tracker = demo_replay.fleet, AlertTracker()
    assert sweep(fleet, tracker, 0) == []
    fleet.hosts["h200x4"].reachable = False
    fleet.publish("h200x4")  # every server of an unreachable host is UNREACHABLE
    assert {s.status for s in fleet.hosts["h200x4"].servers.values()} == {Status.UNREACHABLE}
    sweep(fleet, tracker, 1)
    alerts = sweep(fleet, tracker, 1 + HOLD_S)
    assert [(a.target, a.new) for a in alerts] == [("h200x4", Status.UNREACHABLE)]


async def test_alert_command_gets_the_event_as_json_on_stdin(tmp_path):
    out = tmp_path / "event"
    script = f"import json,sys; open({str(out)!r}, 'w').write(json.load(sys.stdin)['to'])"
    assert await run_alert_command([sys.executable, "-c", script], {"to": "SLOW"}) is None
    assert out.read_text() == "SLOW"
    problem = await run_alert_command([sys.executable, "-c", "import sys; sys.exit(3)"], {})
    assert problem is not None and "exited 3" in problem


# ------------------------------------------------------------------ gating


def test_read_only_hides_what_changes_a_host_and_a_host_selection_greys_server_keys(demo_replay):
    server = demo_replay.fleet.server("ct129", 30000)
    live = gating.Facts(server, read_only=False)
    assert all(
        gating.state(a, live) for a in ("kill", "restore", "relaunch", "probe", "diff", "log")
    )
    locked = gating.Facts(server, read_only=True)
    assert [
        gating.state(a, locked) for a in ("kill", "restore", "rollback", "capture", "lock")
    ] == [False] * 5
    assert gating.state("probe", locked) is True and gating.state("diff", locked) is True
    nothing = gating.Facts(None, read_only=False)
    assert gating.state("diff", nothing) is None and gating.state("kill", nothing) is None
    replaying = gating.Facts(server, read_only=True, live=False)
    assert gating.state("probe", replaying) is False


def test_a_down_server_cannot_be_killed_or_probed_but_can_be_restored(demo_replay):
    down = gating.Facts(demo_replay.fleet.server("h200x4", 30003), read_only=False)
    assert gating.state("kill", down) is None and gating.state("probe", down) is None
    assert gating.state("restore", down) is True


# ------------------------------------------------------- batching and tails


def test_many_changes_become_one_refresh():
    dirty = Dirty()
    for _ in range(500):
        dirty.mark("a", 1)
    dirty.mark("b", None)
    assert dirty.take() == {("a", 1), ("b", None)}
    assert dirty.take() == frozenset()
    older, newer = FleetChanged(frozenset({("a", 1)})), FleetChanged(frozenset({("b", 2)}))
    assert older.can_replace(newer) and newer.keys == {("a", 1), ("b", 2)}


def test_the_tail_cursor_returns_each_new_line_once_even_past_the_deque_limit():
    lines: deque[str] = deque(maxlen=5)
    cursor = TailCursor(lines)
    lines.extend(["a", "b"])
    assert cursor.take() == ["a", "b"]
    same = "same line"
    lines.extend([same, "x" * 1 + "", same])
    assert cursor.take() == [same, "x", same]
    lines.extend(["c", "d", "e"])
    assert cursor.take() == ["c", "d", "e"]
    assert cursor.take() == []


# ---------------------------------------------------- recordings and codec


def test_state_survives_a_recording_round_trip(demo_replay, tmp_path):
    path = tmp_path / "again.jsonl"
    recorder = Recorder(path, demo_replay.fleet, demo_replay.clock)
    recorder.close()
    again = Replay(load(path), to_end=True)
    for server in demo_replay.fleet.all_servers():
        copy = again.fleet.server(server.host, server.port)
        assert json_view.server_record(copy) == json_view.server_record(server)
        assert list(copy.history) == list(server.history) and list(copy.log_lines) == list(
            server.log_lines
        )
    for name, host in demo_replay.fleet.hosts.items():
        assert json_view.host_record(again.fleet.hosts[name]) == json_view.host_record(host)


def test_recordings_mask_secrets(demo_replay):
    server = demo_replay.fleet.server("ct129", 30000)
    main = server.process.main
    secret = ProcInfo(
        **{
            **json_view._proc(main),
            "argv": (*main.argv, "--api-key", "sk-1"),
            "env": {"HF_TOKEN": "hf_x", "CUDA_VISIBLE_DEVICES": "0"},
        }
    )
    encoded = json_view._proc(secret)
    assert "sk-1" not in encoded["argv"] and encoded["env"]["HF_TOKEN"] == "****"
    assert encoded["env"]["CUDA_VISIBLE_DEVICES"] == "0"


# --------------------------------------------------------------- rendering


def test_host_text_is_cleaned_and_never_read_as_markup():
    text = log_line(
        "[bold red]boom[/] \x1b[2J\x1b]2;pwned\x07 Traceback (most recent call last)", PALETTE
    )
    assert isinstance(text, Text) and "[bold red]boom[/]" in text.plain
    assert "\x1b" not in text.plain and "\x07" not in text.plain
    assert "\x07" not in osc_title("host\x07name")[:-1]


def test_decode_lines_are_condensed_to_their_numbers():
    raw = (
        "[2026-12-02 19:42:33 TP0] Decode batch, #running-req: 1, #token: 84, token usage: 0.01, "
        "accept len: 1.75, accept rate: 0.75, cuda graph: True, "
        "gen throughput (token/s): 36.32, #queue-req: 0"
    )
    assert log_line(raw, PALETTE).plain == "19:42:33 36.3 tok/s accept 1.75  run 1 queue 0"
    assert "gen throughput (token/s): 36.32" in log_line(raw, PALETTE, condensed=False).plain


def test_sparklines_scale_from_zero():
    assert sparkline([1, 2, 3, 4, 5, 6, 7, 8]) == "▁▂▃▄▅▆▇█"
    assert sparkline([5, 5, 5], width=2) == "██"
    assert sparkline([45, 51, 45, 51]) == "████"  # zero-based: a small wobble is not an outage
    assert sparkline([20, 51]) == "▄█"
    assert sparkline([32, 64], top=64) == "▄█"  # against the baseline
    assert sparkline([]) == ""


def test_the_title_names_the_worst_status(demo_replay):
    assert (
        fleet_title(demo_replay.fleet) == "sglconsole: LOOPING (3 hosts)"
    )  # old059 loops: worse than a stopped server
    assert fleet_title(FleetState(demo_replay.recording.config)) == "sglconsole: UNKNOWN"


def test_long_flag_names_break_after_a_hyphen_never_mid_word():
    from sglconsole.tui.paint.drift import at_hyphens

    assert at_hyphens("--speculative-num-draft-tokens", 14) == "--speculative-\nnum-draft-\ntokens"
    assert at_hyphens("--tp-size", 14) == "--tp-size"
