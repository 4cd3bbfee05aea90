"""The alert tracker's start: the console keeps what it finds quiet, the exporter tells it."""

from __future__ import annotations

from sglconsole.alerts import AlertTracker
from sglconsole.state.model import Status


def feed(tracker: AlertTracker, statuses: list[Status], start: int = 0) -> list:
    """One observation a second from `start`; what became news, as (old, new)."""
    alerts = [
        tracker.observe("gpu1", 30000, s, "why", float(t)) for t, s in enumerate(statuses, start)
    ]
    return [(a.old, a.new) for a in alerts if a is not None]


def test_the_console_keeps_the_first_status_quiet():
    tracker = AlertTracker(hold_s=2)
    assert feed(tracker, [Status.SLOW] * 5) == []
    assert feed(AlertTracker(hold_s=2), [Status.UNKNOWN] + [Status.SLOW] * 5) == []


def test_the_exporter_tells_the_problems_it_finds_at_start_after_the_hold():
    tracker = AlertTracker(hold_s=2, announce_first=True)
    assert feed(tracker, [Status.SLOW] * 2) == []  # not held long enough yet
    assert feed(tracker, [Status.SLOW] * 2, 2) == [(Status.UNKNOWN, Status.SLOW)]
    assert feed(tracker, [Status.SLOW] * 5, 4) == []  # once
    fresh = AlertTracker(hold_s=2, announce_first=True)
    assert feed(fresh, [Status.UNKNOWN, Status.UP, Status.UP, Status.UP, Status.UP]) == []


def test_settled_is_what_held_for_the_hold_not_what_was_seen_last():
    tracker = AlertTracker(hold_s=2)
    assert tracker.settled("gpu1", 30000) is None  # never observed
    feed(tracker, [Status.UNKNOWN, Status.SLOW])
    assert tracker.settled("gpu1", 30000) == Status.UNKNOWN  # SLOW seen, not held yet
    feed(tracker, [Status.SLOW, Status.SLOW], 2)
    assert tracker.settled("gpu1", 30000) == Status.SLOW
    assert tracker.settled("gpu1", None) is None  # the host's own track is another
