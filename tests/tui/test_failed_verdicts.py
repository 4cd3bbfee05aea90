"""A restore or rollback that fails its own probe: never UP, never "recovered", its problem kept;
and the dialogs of a LOOPING server say what a relaunch can and cannot do."""

from __future__ import annotations

from sglconsole import config
from sglconsole.alerts.tracker import HOLD_S
from sglconsole.sim.fleet.scenarios import demo_hosts
from sglconsole.state.fleet import Status
from sglconsole.tui.app import make_app
from sglconsole.tui.screens.confirm import ConfirmScreen
from tests.tui.helpers import actions_done, confirmation, until
from tests.tui.test_actions_live import alerts_for

SIZE = (120, 36)
TARGET = ("old059", 30000)


def looping_old059():
    """The demo's old059: a buggy SGLang 0.5.9 whose output loops, running its own profile."""
    host = next(h for h in demo_hosts(startup_s=0.5) if h.name == "old059")
    return host


def server(app):
    return app.session.fleet.server(*TARGET)


async def wait_looping(app, pilot, hold: bool = True) -> None:
    await until(
        pilot,
        lambda: server(app) and server(app).status == Status.LOOPING,
        60,
        "old059:30000 LOOPING",
    )
    if hold:  # LOOPING holds: the status a recovery would be news against
        await pilot.pause(HOLD_S + 1)


async def act_and_watch(app, pilot, key: str, seen: list[Status]) -> None:
    """Press KEY then y; record every status the server shows until the action ended and an
    alert's hold (and some) has passed."""
    app.main.tree.select(TARGET)
    await pilot.pause()
    done = len(actions_done(app))
    await pilot.press(key)
    await until(pilot, lambda: isinstance(app.screen, ConfirmScreen), 30, f"{key}'s dialog")
    await pilot.press("y")

    async def watch(seconds: float) -> None:
        for _ in range(int(seconds / 0.1)):
            seen.append(server(app).status)
            await pilot.pause(0.1)

    while len(actions_done(app)) == done:
        await watch(0.1)
    await watch(HOLD_S + 6)


async def test_a_restore_whose_probe_loops_is_never_up_nor_recovered(fleet_factory):
    fleet = fleet_factory([looping_old059()])
    app = make_app(config.load(fleet.config_path))
    async with app.run_test(size=SIZE) as pilot:
        await wait_looping(app, pilot)
        seen: list[Status] = []
        await act_and_watch(app, pilot, "R", seen)
        record = actions_done(app)[-1]
        assert not record.ok and "DEGENERATE" in record.summary, record.summary
        assert Status.UP not in seen, seen
        assert server(app).status == Status.DEGENERATE, server(app).reason
        assert "probe" in server(app).reason and server(app).probe.pid == (
            server(app).process.main.pid
        )
        recovered = [a for a in alerts_for(app, "old059:30000") if a.new == "UP"]
        assert recovered == [], recovered

        # a rollback of the same config: the same truth
        seen.clear()
        await act_and_watch(app, pilot, "u", seen)
        record = actions_done(app)[-1]
        assert record.action == "rollback" and not record.ok, record.summary
        assert "probe: DEGENERATE" in record.summary, record.summary
        assert Status.UP not in seen, seen
        assert server(app).status == Status.DEGENERATE, server(app).reason
        assert [a for a in alerts_for(app, "old059:30000") if a.new == "UP"] == []


async def dialog_of(app, pilot, key: str) -> str:
    await pilot.press(key)
    return " ".join((await confirmation(pilot, app, 30, f"{key}'s dialog")).split())


async def looping_dialog_of(app, pilot, key: str) -> str:
    """KEY's dialog, opened while the server is judged LOOPING: what it says of a relaunch
    follows the status of the moment it opens (a loaded machine may not have judged it yet)."""
    await wait_looping(app, pilot, hold=False)
    await pilot.press(key)
    return " ".join((await confirmation(pilot, app, 30, f"{key}'s dialog")).split())


async def test_a_looping_server_running_its_profile_is_warned_off_a_pointless_relaunch(
    fleet_factory,
):
    fleet = fleet_factory([looping_old059()])
    app = make_app(config.load(fleet.config_path))
    async with app.run_test(size=SIZE) as pilot:
        # no alert is judged here: no need to let LOOPING hold
        await wait_looping(app, pilot, hold=False)
        await until(pilot, lambda: server(app).drift is not None, 30, "the drift check")
        assert not server(app).drift.differs  # it runs its own profile, and loops
        app.main.tree.select(TARGET)
        await pilot.pause()
        for key, verb in (("R", "restore"), ("r", "relaunch")):
            text = await looping_dialog_of(app, pilot, key)
            assert (
                f"its profile already runs and loops on sglang 0.5.9: a {verb} will loop again"
                in text
            ), text
            assert "another SGLang" in text and "ctrl+k kills it" in text, text
            await pilot.press("n")
            await until(pilot, lambda: app.screen is app.main, 10, "the dialog to close")

        # killed while LOOPING: the rollback's dialog says what it would bring back
        await dialog_of(app, pilot, "ctrl+k")
        await pilot.press("y")
        await until(pilot, lambda: actions_done(app), 60, "the kill")
        assert actions_done(app)[-1].ok, actions_done(app)[-1].summary
        text = await dialog_of(app, pilot, "u")
        assert "it was LOOPING when saved" in text, text
        await pilot.press("n")
