"""The console: fleet tree on the left, the selected host or server on the right, keys below."""

from __future__ import annotations

import time

from textual import events
from textual.containers import Horizontal, Vertical
from textual.reactive import reactive
from textual.screen import Screen
from textual.widgets import ContentSwitcher, Input, Static, Tree

from sglconsole.actions import Plan
from sglconsole.actions.audit import AuditLog
from sglconsole.state.fleet import ServerState
from sglconsole.tui import gating, keys
from sglconsole.tui.coalesce import Key, hosts_of, router_of
from sglconsole.tui.history import ActionRecord
from sglconsole.tui.messages import FleetChanged
from sglconsole.tui.screens.acting import RunsActions
from sglconsole.tui.screens.confirm import ConfirmScreen
from sglconsole.tui.screens.help import HelpScreen
from sglconsole.tui.session import Session
from sglconsole.tui.widgets.activity import ActivityView, ProgressPanel
from sglconsole.tui.widgets.fleet_tree import FleetTree
from sglconsole.tui.widgets.host_pane import HostPane
from sglconsole.tui.widgets.key_bar import KeyBar
from sglconsole.tui.widgets.router_pane import RouterPane
from sglconsole.tui.widgets.server_pane import ServerPane
from sglconsole.tui.widgets.top_bar import TopBar

GATED = gating.NEEDS_SERVER | gating.REPLAY_ONLY | {"lock", "close"}
AUDIT_SHOWN = 30
DETAIL_S = 1.0


class MainScreen(RunsActions, Screen):
    BINDINGS = keys.BINDINGS
    selected: reactive[Key | None] = reactive(None, bindings=True)

    def __init__(self, session: Session):
        super().__init__()
        self.session = session
        self._detail_at = 0.0
        self._facts: tuple | None = None

    def compose(self):
        yield TopBar(id="top-bar")
        with Horizontal(id="body"):
            with Vertical(id="fleet-pane"):
                # the tree's number has no room for a unit: say once what it is
                yield Static("decode tok/s, all requests", id="fleet-header")
                yield FleetTree(self.session.fleet, id="fleet")
            with Vertical(id="detail"):
                with ContentSwitcher(id="views", initial="host-view"):
                    yield HostPane(id="host-view")
                    yield ServerPane(self.session.fleet, id="server-view")
                    yield ActivityView(id="activity-view")
                    yield RouterPane(self.session.fleet, id="router-view")
                yield ProgressPanel(id="progress-panel")
        yield KeyBar(id="key-bar")

    def on_mount(self) -> None:
        self.tree.focus()
        self.redraw(set(self.session.fleet.hosts))
        first = next(iter(self.session.fleet.hosts), None)
        if first is not None:
            self.call_after_refresh(self.tree.select, (first, None))

    @property
    def tree(self) -> FleetTree:
        return self.query_one(FleetTree)

    @property
    def server_pane(self) -> ServerPane:
        return self.query_one(ServerPane)

    @property
    def server(self) -> ServerState | None:
        key = self.selected
        return None if key is None or key[1] is None else self.session.fleet.server(*key)

    @property
    def target(self) -> ServerState | None:
        """What a server's key acts on: the selected server, or the selected host's only one."""
        if self.server is not None or self.selected is None:
            return self.server
        host = self.session.fleet.hosts.get(self.selected[0])
        servers = list(host.servers.values()) if host is not None else []
        return servers[0] if len(servers) == 1 else None

    def aim(self) -> ServerState | None:
        """The target, selected in the tree when a host was (so the operator sees which)."""
        target = self.target
        if target is not None and self.server is None:
            self.tree.select((target.host, target.port))
        return target

    # ------------------------------------------------------------ refreshing

    def on_fleet_changed(self, message: FleetChanged) -> None:
        """What changed; at the app's tick, maybe nothing: uptimes and countdowns move anyway."""
        self.redraw(hosts_of(message.keys))

    def redraw(self, hosts: set[str]) -> None:
        now = self.session.clock()
        unreachable = {
            name for name, host in self.session.fleet.hosts.items() if host.reachable is False
        }
        self.tree.sync(hosts | unreachable, now)
        replay_at = now if self.session.ssh is None else None
        replay = getattr(self.app, "replay", None)
        self.query_one(TopBar).show(
            self.session.fleet,
            self.session.read_only,
            self.session.bell,
            replay_at,
            paused=replay is not None and replay.paused,
        )
        selected = self.selected
        if not hosts or (selected is not None and (selected[0] in hosts or router_of(selected))):
            # tables at most every DETAIL_S, whether a change or the clock asks: an idle fleet's
            # GPU samples and the 1 s tick together laid them out twice a second
            full = time.monotonic() - self._detail_at >= DETAIL_S
            if hosts or full:
                self.update_detail(now, full=full)
        facts = self.facts().key()
        if facts != self._facts:  # a server that started or stopped changes which keys apply
            self._facts = facts
            self.refresh_bindings()

    def update_detail(self, now: float, full: bool = True) -> None:
        """What the tree shows (status, numbers) at every refresh, from the same published views;
        the server's GPU and drift tables (costly to lay out) at most every DETAIL_S."""
        switcher = self.query_one(ContentSwitcher)
        if full:
            self._detail_at = time.monotonic()
        if switcher.current == "server-view":
            self.server_pane.update_view(now, tables=full)
        elif switcher.current == "host-view":
            if full:
                self.query_one(HostPane).update_view(now)
        elif switcher.current == "router-view":
            self.query_one(RouterPane).update_view(now)
        else:
            self.show_activity()

    # ------------------------------------------------------------- selection

    def on_tree_node_highlighted(self, event: Tree.NodeHighlighted) -> None:
        self.selected = event.node.data

    def watch_selected(self, key: Key | None) -> None:
        monitor = getattr(self.app, "monitor", None)
        if monitor is not None:  # read from Prometheus: SSH for what is looked at
            monitor.look_at(key[0] if key is not None else None)
        if key is not None:
            self.show_selection(key)

    def shows(self, target: str) -> bool:
        """Whether HOST:PORT is what is selected (the server, or its host)."""
        key = self.selected
        if key is None:
            return False
        return (
            target == f"{key[0]}:{key[1]}"
            if key[1] is not None
            else (target.startswith(f"{key[0]}:"))
        )

    def show_selection(self, key: Key) -> None:
        now = self.session.clock()
        panel = self.query_one(ProgressPanel)
        if panel.record is not None and not self.shows(panel.record.target):
            panel.close()  # another server's progress (or outcome) is not about this one
            panel.record = None
        running = [
            entry
            for entry in self.session.history
            if isinstance(entry, ActionRecord) and entry.running and self.shows(entry.target)
        ]
        if running and key[1] is not None:
            panel.show(running[-1])
        self.refresh_bindings()
        switcher = self.query_one(ContentSwitcher)
        if self.server is not None:
            self.server_pane.show(self.server, now)
            switcher.current = "server-view"
        elif router_of(key) is not None:
            self.query_one(RouterPane).show(router_of(key), now)
            switcher.current = "router-view"
        else:
            self.query_one(HostPane).show(self.session.fleet.hosts[key[0]], now)
            switcher.current = "host-view"

    # ---------------------------------------------------------------- gating

    def facts(self) -> gating.Facts:
        server = self.target
        busy = server is not None and (server.host, server.port) in self.session.busy
        log = self.server_pane.log if self.is_mounted else None
        closable = (
            bool(log and log.filtering)
            or bool(self.is_mounted and self.query_one(ProgressPanel).display)
            or self.showing_activity
        )
        return gating.Facts(
            server, self.session.read_only, busy, closable, live=self.session.ssh is not None
        )

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "replay_pause" and isinstance(self.focused, Input):
            return False  # a space typed into the log filter is a space
        return gating.state(action, self.facts()) if action in GATED else True

    def refusal(self, key: keys.Key) -> str | None:
        """Why KEY does nothing now (a greyed or hidden key), to say so instead of silence."""
        if key.name not in GATED:
            return None
        host = self.selected[0] if self.selected and self.selected[1] is None else None
        host = None if router_of(self.selected) else host
        servers = len(self.session.fleet.hosts[host].servers) if host else 0
        label = key.binding.description.lower()
        return gating.refusal(key.name, label, self.facts(), host, servers)

    def on_key(self, event: events.Key) -> None:
        """A key the gating turned off reaches here instead of its action: say why."""
        if not self.is_active or isinstance(self.focused, Input):
            return
        keymap = getattr(self.app, "keymap", {})  # the operator's own keys (settings file)
        for key in keys.KEYS:
            names = keys.bound(key.binding, keymap).key.split(",")
            if event.key not in (name.strip() for name in names):
                continue
            why = self.refusal(key)
            if why:
                event.stop()
                event.prevent_default()
                self.notify(why, severity="warning", timeout=4)
                return

    # ------------------------------------------------------------ view keys

    def open_tab(self, tab: str) -> None:
        if self.aim() is not None:
            self.query_one(ContentSwitcher).current = "server-view"
            self.server_pane.open(tab)

    def action_diff(self) -> None:
        self.open_tab("config")

    def action_log(self) -> None:
        self.open_tab("log")

    def action_gpus(self) -> None:
        self.open_tab("gpus")

    def action_filter(self) -> None:
        self.open_tab("log")
        self.server_pane.log.open_filter()
        self.refresh_bindings()

    def action_follow(self) -> None:
        self.aim()
        following = self.server_pane.log.toggle_follow()
        self.notify("log: following" if following else "log: paused (f follows again)", timeout=2)

    def action_verbatim(self) -> None:
        self.aim()
        self.server_pane.log.toggle_condensed()

    @property
    def showing_activity(self) -> bool:
        return self.is_mounted and self.query_one(ContentSwitcher).current == "activity-view"

    def action_activity(self) -> None:
        """`a` opens Activity, and closes it again (as Esc does): back to what is selected."""
        if self.showing_activity:
            self.leave_activity()
            return
        self.query_one(ContentSwitcher).current = "activity-view"
        self.show_activity()
        self.refresh_bindings()

    def leave_activity(self) -> None:
        if self.selected is not None:
            self.show_selection(self.selected)
        else:
            self.query_one(ContentSwitcher).current = "host-view"
        self.refresh_bindings()

    def show_activity(self) -> None:
        """This session's history, then the audit log every console and the CLI write."""
        running = [f"{host}:{port}" for host, port in self.session.busy]
        self.query_one(ActivityView).show(
            self.session.history,
            AuditLog().recent(AUDIT_SHOWN, fleet=self.session.config.identity),
            running,
        )

    def action_close(self) -> None:
        log = self.server_pane.log
        if self.showing_activity:
            self.leave_activity()
        elif log.filtering:
            log.close_filter()
        else:
            self.query_one(ProgressPanel).close()
        self.refresh_bindings()

    def action_move(self, delta: int) -> None:
        self.tree.action_cursor_down() if delta > 0 else self.tree.action_cursor_up()

    def action_problem(self, direction: int) -> None:
        key = self.tree.problem(direction)
        if key is None:
            self.notify("no host or server needs attention", timeout=3)
        else:
            self.tree.reveal(key)

    # --------------------------------------------------------- console keys

    def action_lock(self) -> None:
        """Asks first: nothing turns it off in this session, and it sits next to l."""
        plan = Plan(
            "lock",
            "this console read-only",
            [
                "kill, relaunch, restore, rollback and capture are turned off",
                "this cannot be undone in this session: only a restart of the console brings"
                " them back",
                "other consoles and the CLI are not affected",
            ],
        )
        self.app.push_screen(ConfirmScreen(plan), self._lock)

    def _lock(self, yes: bool | None) -> None:
        if not yes:
            self.notify("not locked: the console can still change hosts", timeout=3)
            return
        self.session.lock()
        self.notify(
            "read-only: actions that change a host are hidden until you restart the console"
        )
        self.redraw(set())

    def action_fleet_pane(self) -> None:
        """At 80 columns the detail pane needs the tree's third: hide it (keys still move in it)."""
        pane = self.query_one("#fleet-pane")
        pane.display = not pane.display

    def action_replay_pause(self) -> None:
        replay = self.app.replay
        replay.paused = not replay.paused
        when = time.strftime("%H:%M:%S", time.localtime(replay.now))
        said = f"replay paused at {when} (space plays on)" if replay.paused else "replay: playing"
        self.notify(said, timeout=3)
        self.redraw(set())

    def action_replay_seek(self, seconds: float) -> None:
        replay = self.app.replay
        replay.seek(seconds)
        when = time.strftime("%H:%M:%S", time.localtime(replay.now))
        into = replay.now - replay.recording.start
        self.notify(f"replay at {when} ({into:.0f} s in){' (paused)' if replay.paused else ''}")
        self.redraw(set())

    def action_bell(self) -> None:
        self.session.bell = not self.session.bell
        self.notify(f"bell on alerts: {'on' if self.session.bell else 'off'}", timeout=2)
        self.redraw(set())

    def action_help(self) -> None:
        self.app.push_screen(HelpScreen())
