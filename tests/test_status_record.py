"""One record per status (sglconsole.state.statuses): every view's table is derived from it, so no
view can lack a status and no two views can disagree on what one means."""

from __future__ import annotations

import pytest
from textual.theme import BUILTIN_THEMES

from sglconsole.alerts.tracker import PROBLEMS, rank
from sglconsole.alerts.webhook import labels
from sglconsole.commands.tables import STATUS_STYLE, badge
from sglconsole.state.fleet import SEVERITY, Status, worst
from sglconsole.state.statuses import CALM, INFO, STATUSES, complete
from sglconsole.tui.paint.palette import FILLED, ROLE, palette_of
from sglconsole.tui.screens.help import MEANING


def test_every_status_has_exactly_one_record():
    assert sorted(INFO) == sorted(Status)
    assert len(STATUSES) == len(Status)


def test_a_status_without_a_record_or_with_two_is_refused():
    with pytest.raises(ValueError, match="without a record in STATUSES: UNREACHABLE"):
        complete(STATUSES[1:])
    with pytest.raises(ValueError, match="UP is declared twice"):
        complete((*STATUSES, INFO[Status.UP]))


def test_every_view_table_has_every_status_from_its_record():
    every = set(Status)
    # rank: worst first, each once; the alert tracker ranks by it
    assert [record.status for record in STATUSES] == SEVERITY and set(SEVERITY) == every
    assert [rank(status) for status in SEVERITY] == list(range(len(Status), 0, -1))
    assert worst(every) is STATUSES[0].status
    # the help screen, in the enum's reading order
    assert list(MEANING) == list(Status)
    assert {status: INFO[status].meaning for status in Status} == MEANING
    # problem or not (alerts), critical or not (the webhook's severity), its alert's name
    assert {status for status in every if INFO[status].problem} == PROBLEMS
    for status in every:
        sent = labels("h200x4", 30000, status)
        assert sent["severity"] == ("critical" if INFO[status].critical else "warning")
        assert sent["alertname"] == "Sglconsole" + status.value.title()
    # the CLI's tables
    assert {status: INFO[status].style for status in every} == STATUS_STYLE
    assert all(str(badge(status).style) == INFO[status].style for status in every)
    # the TUI's palette: a theme role for each, filled unless calm, on every built-in theme
    assert {status: INFO[status].role for status in every} == ROLE
    assert every - CALM == FILLED
    for theme in BUILTIN_THEMES.values():
        styles = palette_of(theme).status
        assert set(styles) == every, theme.name
        for status in every:
            assert styles[status].bgcolor is None or status in FILLED, (theme.name, status)


def test_only_up_is_healthy_and_calm_statuses_raise_no_alert():
    assert {status for status in Status if INFO[status].healthy} == {Status.UP}
    assert {Status.UP, Status.UNKNOWN} == CALM
    assert not CALM & PROBLEMS
    assert all(INFO[status].problem for status in Status if INFO[status].critical)
