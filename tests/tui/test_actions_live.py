"""Destructive keys against a fleet of their own: confirm, cancel, restore, and the record they
leave."""

from __future__ import annotations

from sglconsole import config
from sglconsole.actions.audit import AuditLog
from sglconsole.alerts.tracker import HOLD_S
from sglconsole.sim.fleet.scenarios import DRIFTED_27B, QWEN8B
from sglconsole.sim.fleet.start import HostSpec, ServerSpec
from sglconsole.state.fleet import Status
from sglconsole.tui.app import make_app
from sglconsole.tui.history import AlertRecord
from sglconsole.tui.screens.confirm import ConfirmScreen
from tests.tui.helpers import actions_done, confirmation, plain, until

SIZE = (100, 30)


def drifted_ct129() -> HostSpec:
    settings = {"startup_s": 0.5, "load": {"concurrency": 1, "max_tokens": 400}}
    return HostSpec(
        name="ct129",
        gpu_model="A6000",
        gpu_count=2,
        models=("Qwen3.6-27B",),
        sglang=settings,
        servers=[ServerSpec(30000, "qwen27b-tp2-mtp", [0, 1], running=DRIFTED_27B)],
    )


def an_h200() -> HostSpec:
    """One 8B server on an H200: ~3x the drifted 27B's pace, so a sweep takes seconds, not a
    minute and a half."""
    return HostSpec(
        name="h200",
        sglang={"startup_s": 0.5},
        servers=[ServerSpec(30000, "qwen8b-tp1", [0], running=[*QWEN8B, "--port", "30000"])],
    )


def alerts_for(app, target: str) -> list[AlertRecord]:
    return [r for r in app.session.history if isinstance(r, AlertRecord) and r.target == target]


def server_of(app, host: str = "ct129"):
    return app.session.fleet.server(host, 30000)


async def test_cancelling_a_confirmation_changes_nothing(fleet_factory):
    fleet = fleet_factory([drifted_ct129()])
    app = make_app(config.load(fleet.config_path))
    async with app.run_test(size=SIZE) as pilot:
        await until(
            pilot, lambda: server_of(app) and server_of(app).process, 30, "the server's process"
        )
        pid = server_of(app).process.main.pid
        app.main.tree.select(("ct129", 30000))
        for key, answer in (("ctrl+k", "n"), ("R", "escape")):
            await pilot.press(key)
            text = await confirmation(pilot, app, 20, f"{key}'s confirmation")
            assert f"pid {pid}" in text, text
            await pilot.press(answer)
            await until(
                pilot,
                lambda: app.screen is app.main and not app.session.busy,
                5,
                "the dialog to close",
            )
        await pilot.pause(3)  # a monitor cycle: had anything happened, it would show
        assert server_of(app).process.main.pid == pid and server_of(app).action is None
        assert actions_done(app) == []


async def test_restore_asks_first_then_brings_the_drifted_server_back_at_its_baseline(
    fleet_factory,
):
    fleet = fleet_factory([drifted_ct129()])
    app = make_app(config.load(fleet.config_path))
    async with app.run_test(size=SIZE) as pilot:
        await until(
            pilot, lambda: server_of(app) and server_of(app).status == Status.SLOW, 40, "SLOW"
        )
        old_pid = server_of(app).process.main.pid
        # SLOW held until the alerts count it: the problem a recovery is news against (not a
        # pause, which a loaded machine may outrun)
        await until(
            pilot,
            lambda: app.alerts.settled("ct129", 30000) == Status.SLOW,
            HOLD_S + 15,
            "SLOW to hold",
        )
        app.main.tree.select(("ct129", 30000))
        await pilot.press("R")
        text = await confirmation(pilot, app, 20, "the restore's plan")
        assert (
            f"stop: pid {old_pid}" in text
            and "--speculative-num-steps 3" in text
            and "baseline" in text
        )
        await pilot.press("y")
        await until(pilot, lambda: actions_done(app), 120, "restore")
        record = actions_done(app)[-1]
        assert record.ok, "\n".join([record.summary, *[s.line() for s in record.stages]])
        assert "launch" in [s.name for s in record.stages] and "restore ct129:30000" in plain(
            app.main.query_one("#progress").content
        )
        # the audit log's end record carries the verdict, not only "pid N ready"
        restores = [r for r in AuditLog().actions() if r["action"] == "restore"]
        assert restores[-1]["phase"] == "end" and restores[-1]["ok"], restores
        assert "probe OK" in restores[-1]["outcome"] and "baseline" in restores[-1]["outcome"]
        await until(pilot, lambda: server_of(app).status == Status.UP, 90, "ct129:30000 UP")
        await until(pilot, lambda: server_of(app).drift is not None, 30, "the new pid's drift")
        assert server_of(app).process.main.pid != old_pid and not server_of(app).drift.differs

        # "recovered" is news only once the restore's own checks have passed, never before
        def recovered():
            return [a for a in alerts_for(app, "ct129:30000") if a.new != "SLOW"]

        def instead() -> str:
            server = server_of(app)
            return f"{server.status.value} ({server.reason}); {alerts_for(app, 'ct129:30000')}"

        await until(pilot, recovered, HOLD_S + 15, "the recovered alert", seen=instead)
        assert [(a.old, a.new) for a in recovered()] == [("SLOW", "UP")], recovered()
        assert recovered()[0].time >= record.ended


async def test_b_sweeps_the_selected_server_and_charts_tok_s(fleet_factory):
    fleet = fleet_factory([an_h200()])
    app = make_app(config.load(fleet.config_path))
    async with app.run_test(size=SIZE) as pilot:
        await until(
            pilot,
            lambda: server_of(app, "h200") and server_of(app, "h200").health == "ok",
            30,
            "a healthy server",
        )
        app.main.tree.select(("h200", 30000))
        await pilot.press("b")
        await until(pilot, lambda: isinstance(app.screen, ConfirmScreen), 20, "b's confirmation")
        await pilot.press("y")
        await until(pilot, lambda: actions_done(app), 120, "the sweep")
        record = actions_done(app)[-1]
        assert record.ok, (record.summary, [s.line() for s in record.stages])
        lines = record.summary.splitlines()
        assert lines[0].startswith("tok/s by concurrency")
        rows = {int(line.split()[0]): float(line.split()[2]) for line in lines[1:4]}
        assert sorted(rows) == [1, 4, 16] and rows[4] > rows[1]  # more in flight, more tok/s in all
