"""Operator trust: keys that say why they do nothing, a kill no vim habit opens, honest times."""

from __future__ import annotations

import re
import time

from textual.widgets._toast import Toast

from sglconsole import config
from sglconsole.actions import Stage, StageState
from sglconsole.actions.audit import AuditLog
from sglconsole.tui.app import make_app
from sglconsole.tui.history import ActionRecord
from sglconsole.tui.screens.confirm import ConfirmScreen
from sglconsole.tui.screens.help import HelpScreen, keys_table
from sglconsole.tui.widgets.activity import ProgressPanel
from sglconsole.tui.widgets.key_bar import KeyBar
from tests.tui.helpers import actions_done, confirmation, dialog_text, plain, shown, until
from tests.tui.test_actions_live import drifted_ct129, server_of

SIZE = (100, 30)


def said(app) -> list[str]:
    return [n.message for n in app._notifications]


async def test_j_k_move_and_kill_is_ctrl_k_in_help_and_refused_keys_say_why(demo_replay):
    app = make_app(None, replay=demo_replay)
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        app.main.tree.select(("ct129", 30000))
        await pilot.pause()
        await pilot.press("j")
        assert app.main.selected == ("h200x4", None)
        await pilot.press("k")
        assert app.main.selected == ("ct129", 30000) and app.screen is app.main
        await pilot.press("ctrl+k")  # a recording cannot kill: said, not silent
        await pilot.pause()
        assert "replay: kill is off (a recording cannot reach a host)" in said(app), said(app)
        table = plain(keys_table(app))
        assert re.search(r"\^k\s+Kill", table) and re.search(r"k/↑\s+Up", table), table
        await pilot.press("question_mark")
        await pilot.pause()
        assert isinstance(app.screen, HelpScreen)


async def test_a_host_with_one_server_is_acted_on_and_one_with_many_says_so(demo_replay):
    app = make_app(None, replay=demo_replay)
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        app.main.tree.select(("h200x4", None))
        await pilot.pause()
        await pilot.press("d")
        await pilot.pause()
        assert "select a server (h200x4 has 4)" in said(app), said(app)
        assert app.main.selected == ("h200x4", None)
        app.main.tree.select(("ct129", None))  # ct129 has one server: d shows its diff
        await pilot.pause()
        await pilot.press("d")
        await until(pilot, lambda: app.main.selected == ("ct129", 30000), 5, "ct129:30000")
        assert app.main.server_pane.tab == "config"


async def test_ctrl_k_on_a_host_kills_its_only_server_told_in_local_time_timed_from_yes(
    fleet_factory,
):
    fleet = fleet_factory([drifted_ct129()])
    app = make_app(config.load(fleet.config_path))
    async with app.run_test(size=SIZE) as pilot:
        await until(
            pilot, lambda: server_of(app) and server_of(app).process, 30, "the server's process"
        )
        main = server_of(app).process.main
        app.main.tree.select(("ct129", None))  # the host, whose only server is ct129:30000
        await pilot.pause()
        await pilot.press("ctrl+k")
        text = await confirmation(pilot, app, 20, "the kill's plan")
        assert "Kill ct129:30000?" in text and f"pid {main.pid}" in text
        local = time.strftime("%H:%M:%S", time.localtime(main.start))
        assert re.search(rf"started {local}, \d+m\d\ds ago", text), text  # not a raw epoch
        await pilot.pause(3)  # the operator reads the plan: not part of the kill's time
        yes_at = app.session.clock()
        await pilot.press("y")
        await until(pilot, lambda: actions_done(app), 60, "the kill")
        record = actions_done(app)[-1]
        assert record.action == "kill" and record.ok, record.summary
        assert record.started >= yes_at, (record.started, yes_at)


async def test_b_asks_first_then_benches_a_non_speculative_demo_server_end_to_end(demo_fleet):
    app = make_app(config.load(demo_fleet.config_path))
    async with app.run_test(size=SIZE) as pilot:
        await until(
            pilot,
            lambda: (s := app.session.fleet.server("h200x4", 30000)) and s.health == "ok",
            40,
            "h200x4:30000 healthy",
        )
        app.main.tree.select(("h200x4", 30000))
        await pilot.pause()
        await pilot.press("b")
        await until(pilot, lambda: isinstance(app.screen, ConfirmScreen), 20, "b's confirmation")
        # the plan is drawn a moment after the dialog opens (a loaded machine takes longer)
        await until(pilot, lambda: "requests" in dialog_text(app), 20, "b's plan")
        text = dialog_text(app)
        assert "Bench h200x4:30000?" in text and "1, 4, 16 concurrent" in text, text
        # an estimate from the server's decode lines when it has busy ones, else in rounds
        assert re.search(r"duration: (about \d+ s|\d+ rounds)", text), text
        assert "8, 16, 64 requests" in text, text
        await pilot.press("y")
        await until(pilot, lambda: actions_done(app), 180, "the sweep")
        record = actions_done(app)[-1]
        assert record.ok, (record.summary, [s.line() for s in record.stages])
        assert "TypeError" not in record.summary
        rows = [line.split() for line in record.summary.splitlines()[1:4]]
        assert [int(r[0]) for r in rows] == [1, 4, 16] and all(float(r[2]) > 0 for r in rows)


def overlaps(a, b) -> bool:
    return a.x < b.right and b.x < a.right and a.y < b.bottom and b.y < a.bottom


async def test_at_80x24_no_toast_covers_the_progress_panel_of_a_finished_probe(demo_fleet):
    app = make_app(config.load(demo_fleet.config_path))
    async with app.run_test(size=(80, 24), notifications=True) as pilot:
        await until(
            pilot,
            lambda: (s := app.session.fleet.server("h200x4", 30000)) and s.health == "ok",
            40,
            "h200x4:30000 healthy",
        )
        app.main.tree.select(("h200x4", 30000))
        await pilot.pause()
        await pilot.press("p")
        await until(pilot, lambda: actions_done(app), 60, "the probe")
        app.notify("something else happened", timeout=30)  # any toast, e.g. an alert
        await pilot.pause(0.3)
        panel = app.main.query_one(ProgressPanel)
        assert panel.display and "probe h200x4:30000" in plain(
            app.main.query_one("#progress").content
        )
        toasts = list(app.screen.query(Toast))
        assert toasts
        for toast in toasts:
            assert not overlaps(toast.region, panel.region), (toast.region, panel.region)


def long_record(running: bool) -> ActionRecord:
    record = ActionRecord("restore", "ct129:30000", 0.0)
    for n in range(14):
        record.stage(Stage(f"step{n}", StageState.OK, f"detail {n}", duration=0.1))
    record.stage(Stage("last-step", StageState.RUNNING, "waiting for ready"))
    if not running:
        record.stages[-1].state = StageState.OK
        record.finish(True, "UP as pid 9: at baseline", [], 1.0)
    return record


async def test_the_progress_panel_follows_the_running_step_and_goes_with_its_server(demo_replay):
    app = make_app(None, replay=demo_replay)
    async with app.run_test(size=(80, 24)) as pilot:
        app.main.tree.select(("ct129", 30000))
        await pilot.pause()
        panel = app.main.query_one(ProgressPanel)
        app.main.progress(long_record(running=True))
        await pilot.pause(0.3)
        assert panel.display and panel.max_scroll_y > 0  # 15 steps do not fit at 80x24
        assert panel.scroll_y == panel.max_scroll_y  # the running step is in view
        app.main.progress(long_record(running=False))
        await pilot.pause(0.3)
        assert panel.scroll_y == 0  # done: the outcome heads the panel
        app.main.tree.select(("h200x4", 30000))
        await until(pilot, lambda: not panel.display, 5, "the panel to go with its server")


async def test_the_activity_view_shows_every_consoles_audit_and_what_never_finished(demo_replay):
    audit = AuditLog()
    done = audit.begin("kill", "h200x4", 30001, pid=41)
    audit.end(done, True, "stopped pid 41 (SIGTERM)")
    audit.begin("relaunch", "ct129", 30000, stopping_pid=9)  # the console quit midway
    app = make_app(None, replay=demo_replay)
    async with app.run_test(size=(160, 48)) as pilot:
        await pilot.press("a")
        await pilot.pause()
        text = plain(app.main.query_one("#activity-body").content, width=160)
        lines = [line for line in text.splitlines() if "30001" in line or "relaunch" in line]
        assert len(lines) == 2 and "relaunch" in lines[0], text  # newest first
        assert "never finished — check the server" in lines[0], text
        assert "done: stopped pid 41 (SIGTERM)" in lines[1], text
        assert f"{done['user']}@{done['console_host']}" in lines[1], text
        assert "nothing done yet this session" in text


async def test_rollback_is_in_the_footer_at_120_columns(demo_fleet):
    app = make_app(config.load(demo_fleet.config_path))
    async with app.run_test(size=(120, 36)) as pilot:
        await until(
            pilot,
            lambda: (s := app.session.fleet.server("ct129", 30000)) and s.process,
            40,
            "ct129:30000 running",
        )
        app.main.tree.select(("ct129", 30000))
        await pilot.pause(0.3)
        bar = app.main.query_one(KeyBar)
        keys = bar.keys_text().plain
        assert "Rollback" in keys and "Restore" in keys and "Kill" in keys, keys
        assert "Help" in keys and "Quit" in keys and bar.keys_text().cell_len <= 120, keys


async def test_backslash_gives_the_detail_pane_the_whole_width_at_80x24(demo_replay):
    app = make_app(None, replay=demo_replay)
    async with app.run_test(size=(80, 24)) as pilot:
        app.main.tree.select(("ct129", 30000))
        await pilot.pause()
        detail = app.main.query_one("#detail")
        assert detail.region.width < 60
        await pilot.press("backslash")
        await pilot.pause()
        assert detail.region.width == 80
        await pilot.press("j")  # still moves in the hidden tree
        assert app.main.selected == ("h200x4", None)
        await pilot.press("backslash")
        await pilot.pause()
        assert detail.region.width < 60 and app.main.query_one("#fleet-pane").display


async def test_after_a_kill_the_config_tab_has_no_running_column_and_the_header_says_who(
    fleet_factory,
):
    """A killed server kept its last comparison, 'running' column and all; its reason read like
    a crash (the kill's own SIGTERM traceback as 'its log's last error')."""
    fleet = fleet_factory([drifted_ct129()])
    app = make_app(config.load(fleet.config_path))
    async with app.run_test(size=(120, 36)) as pilot:
        await until(pilot, lambda: server_of(app) and server_of(app).drift, 60, "the comparison")
        app.main.tree.select(("ct129", 30000))
        await pilot.pause()
        await pilot.press("d")
        await until(pilot, lambda: app.main.server_pane.tab == "config", 5, "the Config tab")
        assert "running" in shown(app, "#drift-panel .panel-body")  # compared while it runs
        await pilot.press("ctrl+k")
        await until(pilot, lambda: isinstance(app.screen, ConfirmScreen), 20, "the kill dialog")
        await pilot.press("y")
        await until(pilot, lambda: actions_done(app), 60, "the kill")
        assert actions_done(app)[-1].ok
        await until(
            pilot,
            lambda: server_of(app).process is None and "stopped by" in server_of(app).view.reason,
            30,
            "DOWN, stopped by the operator",
        )
        # the Config tab is redrawn a moment after: wait for it (a loaded machine takes longer)
        await until(
            pilot,
            lambda: "not running" in shown(app, "#drift-panel .panel-body"),
            5,
            "the Config tab to say not running",
        )
        panel = shown(app, "#drift-panel .panel-body")
        assert "not running: nothing to compare" in panel, panel
        assert not re.search(r"\brunning\b.*\bresolved\b|profile\s+running", panel), panel
        reason = server_of(app).view.reason
        assert re.fullmatch(r"stopped by \S+ \(kill\) at \d\d:\d\d:\d\d", reason), reason
        # the header follows the published view at the next batch of changes (a fresh clone once
        # read it the moment before that batch: still the running process's line)
        await until(
            pilot,
            lambda: "stopped by" in shown(app, "#server-header"),
            5,
            "the header to say who stopped it",
            seen=lambda: shown(app, "#server-header"),
        )
