"""Small helpers for driving the console in tests."""

from __future__ import annotations

import io
import time
from collections.abc import Callable

from rich.console import Console
from textual.widgets import Static

from sglconsole.tui.app import ConsoleApp
from sglconsole.tui.history import ActionRecord
from sglconsole.tui.screens.confirm import ConfirmScreen


async def until(
    pilot,
    check: Callable[[], object],
    timeout: float = 30.0,
    what: str = "condition",
    seen: Callable[[], str] | None = None,
):
    """Let the app run until check() is truthy; fail with `what` otherwise (and with what
    `seen()` says the app shows instead, for whoever reads the failure)."""
    deadline = time.monotonic() + timeout
    while True:
        value = check()
        if value:
            return value
        if time.monotonic() > deadline:
            instead = f": {seen()}" if seen is not None else ""
            raise AssertionError(f"timed out after {timeout:g}s waiting for {what}{instead}")
        await pilot.pause(0.1)


def plain(renderable, width: int = 160) -> str:
    """What a Rich renderable shows, as plain text."""
    console = Console(width=width, record=True, color_system=None, file=io.StringIO())
    console.print(renderable)
    return console.export_text()


def shown(app: ConsoleApp, selector: str) -> str:
    """What a Static shows; for a container (the host pane's #host-body), what its Statics
    show, top to bottom."""
    widget = app.screen.query_one(selector)
    if isinstance(widget, Static):
        return plain(widget.content)
    return "".join(plain(part.content) for part in widget.query(Static) if part.display)


def log_lines(app: ConsoleApp) -> list[str]:
    return [strip.text for strip in app.main.server_pane.log.lines.lines]


def actions_done(app: ConsoleApp) -> list[ActionRecord]:
    """Finished actions of the session (alerts and running actions left out)."""
    return [e for e in app.session.history if isinstance(e, ActionRecord) and not e.running]


def dialog_text(app: ConsoleApp) -> str:
    return "\n".join(plain(w.content) for w in app.screen.query("#dialog Static"))


async def confirmation(
    pilot, app: ConsoleApp, timeout: float = 20.0, what: str = "the dialog"
) -> str:
    """The confirmation's text once its plan is drawn: the screen is pushed a moment before its
    widgets are composed, and the plan's Static inside its scroll a moment after the hint (on a
    loaded machine, more than a moment: a fresh clone once read the title and the hint alone)."""

    def drawn() -> str:
        if not isinstance(app.screen, ConfirmScreen):
            return ""
        if not app.screen.query("#dialog-hint") or not app.screen.query("#dialog-body Static"):
            return ""
        return dialog_text(app)

    return await until(pilot, drawn, timeout, what)
