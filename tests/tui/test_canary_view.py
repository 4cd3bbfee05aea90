"""The canary where the operator looks: a column in the host's table and, in the server's view,
its verdict with its pass/fail history and each last answer next to the expected one — on a
simulated server over real sshd whose answers decay into loops after its first run."""

from __future__ import annotations

from sglconsole import config
from sglconsole.tui.app import make_app
from tests.e2e.test_canary import h200, profiles
from tests.tui.helpers import shown, until

LARGE = (160, 48)


async def test_the_canary_column_and_the_last_answers_next_to_the_expected(fleet_factory):
    fleet = fleet_factory([h200(degrade_after=3, kv_canary_violations=2)], profiles())
    app = make_app(config.load(fleet.config_path))
    async with app.run_test(size=LARGE) as pilot:

        def failed() -> bool:
            server = app.session.fleet.server("h200", 30000)
            run = server.canary.current(server.view.pid) if server else None
            return run is not None and run.verdict == "DEGENERATE"

        await until(pilot, failed, 60, "the canary's second run loops")
        app.main.tree.select(("h200", None))
        await until(
            pilot, lambda: "DEGENERATE ✓✗" in shown(app, "#host-body"), 10, "the host's table"
        )
        assert "canary" in shown(app, "#host-body")
        app.main.tree.select(("h200", 30000))
        await until(
            pilot,
            lambda: "canary DEGENERATE ✓✗" in shown(app, "#server-header"),
            10,
            "the server's view",
        )
        header = shown(app, "#server-header")
        assert "arith '2 + 2 = 2." in header and "(expected 4)" in header, header
        assert "SGLang warned: KV canary violations" in header, header

        def alerted() -> list:
            return [
                record
                for record in app.session.history
                if record.target == "h200:30000" and record.new == "canary DEGENERATE"
            ]

        # the alert tracker's news, once two runs in a row failed (alerts.canary)
        await until(pilot, alerted, 30, "the canary's alert in the console's history")
        assert "canary DEGENERATE" in alerted()[0].reason, alerted()
