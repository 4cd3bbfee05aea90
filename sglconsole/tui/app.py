"""The Textual app: wiring only. Builds the session, starts the monitor (or a replay), batches
fleet changes into a few refreshes a second (sooner for what is on screen), raises alerts, records,
sets the title."""

from __future__ import annotations

import asyncio
import os
import signal
import sys
import time
from collections.abc import Iterable
from functools import partial
from pathlib import Path

from textual.app import App, SystemCommand
from textual.binding import Binding
from textual.screen import Screen
from textual.theme import BUILTIN_THEMES

from sglconsole.actions.audit import AuditStops
from sglconsole.alerts.command import run_alert_command
from sglconsole.alerts.tracker import Alert, AlertTracker, sweep
from sglconsole.config import Config
from sglconsole.config.console_settings import ConsoleSettings, load_settings
from sglconsole.core.text import clean
from sglconsole.errors import UsageError
from sglconsole.remote.monitor import FleetMonitor
from sglconsole.tui.coalesce import Dirty, router_of
from sglconsole.tui.history import AlertRecord
from sglconsole.tui.keys import KEYS, bound, clashes
from sglconsole.tui.messages import FleetChanged
from sglconsole.tui.recorder import Recorder
from sglconsole.tui.replay import Replay, load
from sglconsole.tui.screens.main import MainScreen
from sglconsole.tui.session import Session
from sglconsole.tui.title import fleet_title, osc_title

TICK_S = 1.0
"""The display's one clock: every second the changes of hosts not on screen are drawn, together
with what moves without a change (uptimes, retry countdowns), and alerts are swept (a status lasts
at least that long before it is news; a sweep walks the whole fleet). A 0.2 s refresh beside the
screen's own 1 s tick drew an idle fleet 3-4 times a second, its hosts' GPU samples apart."""
SHOWN_S = (
    0.03  # a change to the host or server on screen is drawn this soon (batching what else came)
)
MIN_GAP_S = 0.1  # and never more than ~10 refreshes a second in all
DRAWN_S = 0.9 * TICK_S
"""A tick this soon after the last redraw draws nothing of its own: that redraw (what is on
screen changed: the selected host's GPU sample, each second) took every change of the fleet then
and drew the clock; what changed since waits for the next, within a second still. An idle fleet
was drawn twice a second, its ticks and the selected host's samples apart."""
THEME_ALIASES = {"dark": "textual-dark", "light": "textual-light", "ansi": "ansi-dark"}


def theme_name(name: str | None, settings: ConsoleSettings | None = None) -> str:
    """--theme: dark (default), light, ansi (the terminal's own colours), or any Textual theme;
    without --theme, TEXTUAL_THEME, then the settings file's theme."""
    name = name or os.environ.get("TEXTUAL_THEME") or (settings.theme if settings else None)
    chosen = THEME_ALIASES.get(name or "dark", name or "dark")
    if chosen not in BUILTIN_THEMES:
        names = ", ".join([*THEME_ALIASES, *BUILTIN_THEMES])
        raise UsageError(f"unknown theme {name!r}; choose one of: {names}")
    return chosen


class ConsoleApp(App[int]):
    CSS_PATH = "console.tcss"
    TITLE = "sglconsole"
    # Textual binds ctrl+p only when no binding opens the palette: ours must name both keys
    BINDINGS = [
        Binding("ctrl+p,colon", "command_palette", "Commands", show=False, id="command-palette")
    ]

    def __init__(
        self,
        session: Session,
        *,
        monitor: FleetMonitor | None = None,
        replay: Replay | None = None,
        record: Path | None = None,
        theme: str = "textual-dark",
        keymap: dict[str, str] | None = None,
    ):
        super().__init__()
        self.keymap = keymap or {}
        """binding id -> keys, from the settings file: what the keys are, for every view."""
        self.session = session
        self.monitor = monitor
        self.replay = replay
        self.record_path = record
        self.recorder: Recorder | None = None
        self.dirty = Dirty()
        self.alerts = AlertTracker()
        self.main = MainScreen(session)
        self.theme = theme
        self._title = ""
        self._unsubscribe = None
        self._soon: asyncio.TimerHandle | None = None
        self._flushed_at = 0.0

    def get_driver_class(self):
        chosen = super().get_driver_class()
        if sys.platform == "win32":  # no Linux driver to replace (it needs termios)
            return chosen
        from sglconsole.tui.driver import quiet_driver

        return quiet_driver(chosen)

    def on_mount(self) -> None:
        if self.keymap:
            self.set_keymap(self.keymap)
        self.push_screen(self.main)
        self._unsubscribe = self.session.fleet.subscribe(self.published)
        if self.record_path is not None:
            self.recorder = Recorder(self.record_path, self.session.fleet, self.session.clock)
        self.set_interval(TICK_S, self.tick)
        if self.monitor is not None:
            if self.monitor.on_demand is not None:  # an action's connection is never cut
                self.monitor.on_demand.busy = lambda host: any(
                    busy_host == host for busy_host, _ in self.session.busy
                )
            self.monitor.start()
        if self.replay is not None:
            self.run_worker(self._play(self.replay), group="replay", exit_on_error=False)
        self.show_title(fleet_title(self.session.fleet))
        self._exit_on_hangup()

    async def _play(self, replay: Replay) -> None:
        """The recording, played; each time it reaches its end, say so, or a still screen reads
        as a calm fleet (a replay opened at its end already shows its last moment)."""

        def ended() -> None:
            when = time.strftime("%H:%M:%S", time.localtime(replay.now))
            self.notify(
                f"the recording ended at {when}: what shows is its last moment "
                "([ goes back, q quits)",
                title="replay",
                timeout=30,
            )

        await replay.play(ended)

    def _exit_on_hangup(self) -> None:
        """SIGTERM and SIGHUP (the tmux pane closed) end the app like q: unmount stops the monitor,
        and whoever started the app (the demo) cleans up after run() returns."""
        loop = asyncio.get_running_loop()
        for number in (signal.SIGTERM, signal.SIGHUP):
            try:
                loop.add_signal_handler(number, self.exit)
            except (ValueError, RuntimeError, NotImplementedError):
                pass  # not the main thread (tests drive the app from a worker): nothing to install

    async def on_unmount(self) -> None:
        if self._unsubscribe is not None:
            self._unsubscribe()
        if self.recorder is not None:
            self.recorder.close()
        if self.monitor is not None:
            await self.monitor.stop()

    # --------------------------------------------------------- refresh loop

    def published(self, host: str, port: int | None) -> None:
        """Fleet listener: everything waits for the next tick, except what the operator is
        looking at."""
        self.dirty.mark(host, port)
        if self._soon is None and self._on_screen(host, port):
            try:
                loop = asyncio.get_running_loop()
            except RuntimeError:  # not on the app's loop: the next tick will show it
                return
            delay = max(SHOWN_S, self._flushed_at + MIN_GAP_S - loop.time())
            self._soon = loop.call_later(delay, self._flush_soon)

    def _on_screen(self, host: str, port: int | None) -> bool:
        """Whether a change of HOST (its server PORT) shows in what is selected: that host, that
        server, or a router fronting a server of that host."""
        shown = self.main.selected
        if shown is None:
            return False
        router = router_of(shown)
        if router is not None:
            return host in self.session.fleet.routed_hosts(router)
        return shown[0] == host and shown[1] in (None, port)

    def _flush_soon(self) -> None:
        self._soon = None
        self.flush_changes()

    def tick(self) -> None:
        """Every TICK_S: what changed since (no change: the clock's own redraw), unless a redraw
        drew it less than DRAWN_S ago; and alerts."""
        if asyncio.get_running_loop().time() - self._flushed_at >= DRAWN_S:
            self.flush_changes(tick=True)
        if self.replay is not None:  # swept at the recording's own moments, not by this clock
            found = self.replay.take_alerts()
        else:
            found = sweep(self.session.fleet, self.alerts, self.session.clock())
        for alert in found:
            self.raise_alert(alert)

    def flush_changes(self, tick: bool = False) -> None:
        keys = self.dirty.take()
        if keys or tick:
            self.main.post_message(FleetChanged(keys))
            self._flushed_at = asyncio.get_running_loop().time()
        if keys:
            if self.recorder is not None:
                self.recorder.write(keys)
            self.show_title(fleet_title(self.session.fleet))

    def show_title(self, text: str) -> None:
        if text == self._title:
            return
        self._title = text
        self.sub_title = text
        if not self.is_headless and self._driver is not None:
            self._driver.write(
                osc_title(text)
            )  # Textual has no API for the terminal's title (bell() does the same)

    # --------------------------------------------------------------- alerts

    def raise_alert(self, alert: Alert) -> None:
        self.session.history.append(
            AlertRecord(
                alert.time,
                alert.target,
                alert.old.value,
                alert.what,  # its router, its canary or its status: what changed
                alert.reason,
            )
        )
        looking_at = self.main.selected[0] if self.main.selected else None
        if alert.host != looking_at or not alert.problem:
            word = "problem" if alert.problem else "recovered"
            change = (
                alert.what
                if alert.router or alert.canary
                else f"{alert.old.value} → {alert.new_word}"
            )
            change = f"sign before an outage: {alert.sign}" if alert.sign else change
            self.notify(
                f"{clean(alert.target)}: {change}\n{clean(alert.reason)}",
                title=word,
                severity="warning" if alert.problem else "information",
                timeout=10,
            )
        if self.session.bell and alert.problem:
            self.bell()
        argv = self.session.config.model.alert_command
        if argv:
            self.run_worker(
                self._alert_command(argv, alert.to_json()), group="alerts", exit_on_error=False
            )

    async def _alert_command(self, argv: list[str], event: dict) -> None:
        problem = await run_alert_command(argv, event)
        if problem:
            self.notify(problem, severity="warning")

    def get_key_display(self, binding: Binding) -> str:
        """As the operator bound it (the settings file's [keys]), not as declared."""
        return super().get_key_display(bound(binding, self.keymap))

    # ------------------------------------------------------ command palette

    def get_system_commands(self, screen: Screen) -> Iterable[SystemCommand]:
        yield from super().get_system_commands(screen)
        for key in KEYS:
            if self.main.check_action(key.name, ()):
                run = partial(self.main.run_action, key.binding.action)
                yield SystemCommand(
                    f"{key.binding.description} ({self.get_key_display(key.binding)})",
                    key.binding.tooltip,
                    run,
                )


def checked_keymap(settings: ConsoleSettings) -> dict[str, str]:
    """The settings file's [keys], every id one of the console's bindings."""
    known = {key.id for key in KEYS}
    for name in settings.keys:
        if name not in known:
            raise UsageError(
                f"{settings.path}: [keys]: unknown binding id {name!r} "
                f"(ids: {', '.join(sorted(known))})"
            )
    for key, first, second in clashes(settings.keys):
        raise UsageError(
            f"{settings.path}: [keys]: {key!r} would be bound to both {first!r} and {second!r}; "
            f"give one of them another key"
        )
    return dict(settings.keys)


def make_app(
    config: Config | None,
    *,
    read_only: bool = False,
    monitor: FleetMonitor | None = None,
    theme: str | None = None,
    record: str | Path | None = None,
    replay: Replay | str | Path | None = None,
) -> ConsoleApp:
    """The console on a live fleet (its own FleetMonitor unless given one) or on a recording
    (read-only); theme and keys from the operator's settings file (config.console_settings)."""
    settings = load_settings()
    keymap = checked_keymap(settings)
    record_path = Path(record) if record else None
    if replay is not None:
        replay = replay if isinstance(replay, Replay) else Replay(load(Path(replay)))
        session = Session(
            replay.recording.config, replay.fleet, None, read_only=True, clock=replay.clock
        )
        return ConsoleApp(
            session,
            replay=replay,
            record=record_path,
            theme=theme_name(theme, settings),
            keymap=keymap,
        )
    if config is None:
        raise UsageError("make_app needs a config, or a replay")
    monitor = monitor or FleetMonitor(config, stops=AuditStops())
    session = Session(config, monitor.state, monitor.ssh, read_only=read_only)
    return ConsoleApp(
        session,
        monitor=monitor,
        record=record_path,
        theme=theme_name(theme, settings),
        keymap=keymap,
    )
