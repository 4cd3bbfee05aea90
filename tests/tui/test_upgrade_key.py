"""The console's `U`: it asks the release, then confirms with the same translation and commands
the CLI prints (the profile read by meaning, what 0.5.11 requires added, the venv beside the
running one); cancelled, nothing changes."""

from __future__ import annotations

from sglconsole import config
from sglconsole.tui.app import make_app
from sglconsole.tui.screens.ask import AskScreen
from tests.e2e.test_upgrade import old059, profiles
from tests.tui.helpers import actions_done, confirmation, until


async def test_upgrade_key_asks_the_release_and_confirms_the_translation(fleet_factory):
    fleet = fleet_factory([old059()], profiles())
    app = make_app(config.load(fleet.config_path))
    async with app.run_test(size=(160, 48)) as pilot:
        server = lambda: app.session.fleet.server("old059", 30000)  # noqa: E731
        await until(pilot, lambda: server() and server().process, 30, "the server's process")
        pid = server().process.main.pid
        app.main.tree.select(("old059", 30000))
        await pilot.press("U")
        await until(pilot, lambda: isinstance(app.screen, AskScreen), 10, "the release question")
        field = app.screen.query_one("Input")
        field.value = "0.5.11"
        await pilot.press("enter")
        text = await confirmation(pilot, app, 30, "the upgrade's plan")
        assert "profile qwen-next-mtp: SGLang 0.5.9 -> 0.5.11" in text, text
        assert "added: - -> --mamba-scheduler-strategy extra_buffer" in text, text
        assert "model card (README.md): sglang>=0.5.10; the host's 0.5.9 is older" in text, text
        assert "-sglang-0.5.11/bin/python -m pip install sglang==0.5.11" in text, text
        await pilot.press("escape")
        await until(pilot, lambda: app.screen is app.main and not app.session.busy, 5, "closed")
        await pilot.pause(2)
        assert server().process.main.pid == pid and actions_done(app) == []
