"""The keys that act on a server (the actions of sglconsole.catalog), for MainScreen.

Each runs `operations.perform` in a worker; this mixin is the `Frontend` it talks
back to: the confirmation dialog, the progress panel, notifications.
"""

from __future__ import annotations

from dataclasses import replace
from functools import partial

from sglconsole.actions import Plan
from sglconsole.actions.registry import Action
from sglconsole.catalog import ACTIONS
from sglconsole.state.fleet import ServerState
from sglconsole.tui.history import ActionRecord
from sglconsole.tui.operations import perform, replace_profile_plan
from sglconsole.tui.screens.ask import AskScreen
from sglconsole.tui.screens.confirm import ConfirmScreen
from sglconsole.tui.session import Session
from sglconsole.tui.widgets.activity import ProgressPanel
from sglconsole.upgrade.action import newest


class RunsActions:
    """Mixed into MainScreen, which provides `session`, `aim` (the server a key acts on: the
    selected one, or the selected host's only one) and `update_detail`."""

    session: Session

    def aim(self) -> ServerState | None:
        raise NotImplementedError

    def shows(self, target: str) -> bool:
        raise NotImplementedError

    async def action_quit(self) -> None:
        if not self.session.busy:
            await self.app.action_quit()
            return
        running = ", ".join(f"{host}:{port}" for host, port in sorted(self.session.busy))
        plan = Plan(
            "quit",
            "sglconsole",
            [
                f"actions still run on {running}",
                "quitting cancels them midway: a server may be left stopped (u rolls back)",
            ],
        )
        self.app.push_screen(ConfirmScreen(plan), self._quit_anyway)

    def _quit_anyway(self, yes: bool | None) -> None:
        if yes:
            self.app.exit()

    def action_kill(self) -> None:
        self.operate(ACTIONS["kill"])

    def action_relaunch(self) -> None:
        self.operate(ACTIONS["relaunch"])

    def action_restore(self) -> None:
        self.operate(ACTIONS["restore"])

    def action_rollback(self) -> None:
        self.operate(ACTIONS["rollback"])

    def action_router_in(self) -> None:
        self.operate(ACTIONS["router-in"])

    def action_probe(self) -> None:
        self.operate(ACTIONS["probe"])

    def action_bench(self) -> None:
        self.operate(ACTIONS["bench"])

    def action_capture(self) -> None:
        """Asks the new profile's name first (and whether to replace one of that name)."""
        server = self.aim()
        if server is None:
            return
        default = (
            f"{server.profile_name}-running"
            if server.profile_name
            else f"{server.host}-{server.port}"
        )
        self.app.push_screen(
            AskScreen(f"Save what runs on {server.key} as the profile named:", default),
            partial(self._capture_as, server),
        )

    def action_upgrade(self) -> None:
        """Asks the release first (the newest one sglconsole has tables for, by default)."""
        server = self.aim()
        if server is None:
            return
        self.app.push_screen(
            AskScreen(f"Upgrade {server.key}'s profile to SGLang version:", newest()),
            partial(self._upgrade_to, server),
        )

    def _upgrade_to(self, server: ServerState, version: str | None) -> None:
        if version:
            action = ACTIONS["upgrade"]
            plan = partial(action.plan, version=version.strip())
            self.operate(replace(action, plan=plan), server, version=version.strip())

    def _capture_as(self, server: ServerState, name: str | None) -> None:
        if not name:
            return
        if name not in self.session.config.profiles:
            self.operate(ACTIONS["capture"], server, name=name)
            return
        plan = replace_profile_plan(name, server.key, self.session.config.path)
        self.app.push_screen(ConfirmScreen(plan), partial(self._replace_profile, server, name))

    def _replace_profile(self, server: ServerState, name: str, yes: bool | None) -> None:
        if yes:
            self.operate(ACTIONS["capture"], server, name=name, force=True)

    def operate(self, action: Action, server: ServerState | None = None, **options) -> None:
        server = server or self.aim()
        if server is None:
            return
        target = (server.host, server.port)
        self.session.busy.add(target)
        self.refresh_bindings()
        self.run_worker(
            self._perform(action, *target, options),
            group="ops",
            name=f"{action.name} {server.key}",
            exit_on_error=False,
        )

    async def _perform(self, action: Action, host: str, port: int, options: dict) -> None:
        try:
            await perform(action, host, port, self.session, self, **options)
        finally:
            self.session.busy.discard((host, port))
            self.refresh_bindings()

    # ----------------------------------------------- what perform() calls back

    async def confirm(self, plan: Plan) -> bool:
        return bool(await self.app.push_screen_wait(ConfirmScreen(plan)))

    def progress(self, record: ActionRecord) -> bool:
        """Shown in the panel when it is about what is selected (True then)."""
        panel = self.query_one(ProgressPanel)
        shown = self.shows(record.target) or panel.record is record
        if shown:
            panel.show(record)
        self.refresh_bindings()
        return shown and panel.display

    def finished(self, record: ActionRecord) -> None:
        if not self.progress(record):
            # the operator looks elsewhere: one line says it ended (the panel holds the detail)
            severity = "information" if record.ok else "error"
            outcome = record.summary.splitlines()[0] if record.summary else ""
            verdict = "done" if record.ok else "FAILED"
            self.notify(
                f"{record.action} {record.target} {verdict}: {outcome}",
                severity=severity,
                timeout=6,
            )
        self.update_detail(self.session.clock())

    def refused(self, message: str) -> None:
        self.notify(message, severity="warning", timeout=4)
