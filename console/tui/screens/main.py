"""The console: fleet tree on the left, the selected host or server on the right, keys below."""

from __future__ import annotations

from textual.containers import Horizontal, Vertical
from textual.reactive import reactive
from textual.screen import Screen
from textual.widgets import ContentSwitcher, Tree

from console.actions import Plan
from console.fleet import ServerState
from console.tui import gating, keys
from console.tui.coalesce import Key, hosts_of
from console.tui.history import ActionRecord
from console.tui.messages import FleetChanged
from console.tui.operations import OPERATIONS, Operation, capture, perform
from console.tui.screens.ask import AskScreen
from console.tui.screens.confirm import ConfirmScreen
from console.tui.screens.help import HelpScreen
from console.tui.session import Session
from console.tui.widgets.activity import ActivityView, ProgressPanel
from console.tui.widgets.fleet_tree import FleetTree
from console.tui.widgets.host_view import HostView
from console.tui.widgets.key_bar import KeyBar
from console.tui.widgets.server_view import ServerView
from console.tui.widgets.top_bar import TopBar

GATED = gating.NEEDS_SERVER | {"lock", "close"}


class MainScreen(Screen):
    BINDINGS = keys.BINDINGS
    selected: reactive[Key | None] = reactive(None, bindings=True)

    def __init__(self, session: Session):
        super().__init__()
        self.session = session

    def compose(self):
        yield TopBar(id="top-bar")
        with Horizontal(id="body"):
            yield FleetTree(self.session.fleet, id="fleet")
            with Vertical(id="detail"):
                with ContentSwitcher(id="views", initial="host-view"):
                    yield HostView(id="host-view")
                    yield ServerView(self.session.fleet, id="server-view")
                    yield ActivityView(id="activity-view")
                yield ProgressPanel(id="progress")
        yield KeyBar(id="key-bar")

    def on_mount(self) -> None:
        self.tree.focus()
        self.set_interval(1.0, self.tick)  # uptimes and retry countdowns move without fleet changes
        self.redraw(set(self.session.fleet.hosts))
        first = next(iter(self.session.fleet.hosts), None)
        if first is not None:
            self.call_after_refresh(self.tree.select, (first, None))

    @property
    def tree(self) -> FleetTree:
        return self.query_one(FleetTree)

    @property
    def server_view(self) -> ServerView:
        return self.query_one(ServerView)

    @property
    def server(self) -> ServerState | None:
        key = self.selected
        return None if key is None or key[1] is None else self.session.fleet.server(*key)

    # ------------------------------------------------------------ refreshing

    def on_fleet_changed(self, message: FleetChanged) -> None:
        self.redraw(hosts_of(message.keys))

    def tick(self) -> None:
        self.redraw(set())

    def redraw(self, hosts: set[str]) -> None:
        now = self.session.clock()
        unreachable = {n for n, h in self.session.fleet.hosts.items() if h.reachable is False}
        self.tree.sync(hosts | unreachable, now)
        self.query_one(TopBar).show(self.session.fleet, self.session.read_only, self.session.bell)
        self.update_detail(now)
        self.refresh_bindings()  # a server that started or stopped changes which keys apply

    def update_detail(self, now: float) -> None:
        switcher = self.query_one(ContentSwitcher)
        if switcher.current == "server-view":
            self.server_view.update_view(now)
        elif switcher.current == "host-view":
            self.query_one(HostView).update_view(now)
        else:
            self.query_one(ActivityView).show(self.session.history)

    # ------------------------------------------------------------- selection

    def on_tree_node_highlighted(self, event: Tree.NodeHighlighted) -> None:
        self.selected = event.node.data

    def watch_selected(self, key: Key | None) -> None:
        if key is not None:
            self.show_selection(key)

    def show_selection(self, key: Key) -> None:
        now = self.session.clock()
        switcher = self.query_one(ContentSwitcher)
        if self.server is not None:
            self.server_view.show(self.server, now)
            switcher.current = "server-view"
        else:
            self.query_one(HostView).show(self.session.fleet.hosts[key[0]], now)
            switcher.current = "host-view"

    # ---------------------------------------------------------------- gating

    def facts(self) -> gating.Facts:
        server = self.server
        busy = server is not None and (server.host, server.port) in self.session.busy
        log = self.server_view.log if self.is_mounted else None
        closable = bool(log and log.filtering) or bool(self.is_mounted and self.query_one(ProgressPanel).display)
        return gating.Facts(server, self.session.read_only, busy, closable, live=self.session.ssh is not None)

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        return gating.state(action, self.facts()) if action in GATED else True

    # ------------------------------------------------------------ view keys

    def open_tab(self, tab: str) -> None:
        if self.server is not None:
            self.query_one(ContentSwitcher).current = "server-view"
            self.server_view.open(tab)

    def action_diff(self) -> None:
        self.open_tab("config")

    def action_log(self) -> None:
        self.open_tab("log")

    def action_gpus(self) -> None:
        self.open_tab("gpus")

    def action_filter(self) -> None:
        self.open_tab("log")
        self.server_view.log.open_filter()
        self.refresh_bindings()

    def action_follow(self) -> None:
        following = self.server_view.log.toggle_follow()
        self.notify("log: following" if following else "log: paused (f follows again)", timeout=2)

    def action_verbatim(self) -> None:
        self.server_view.log.toggle_condensed()

    def action_activity(self) -> None:
        self.query_one(ContentSwitcher).current = "activity-view"
        self.query_one(ActivityView).show(self.session.history)

    def action_close(self) -> None:
        log = self.server_view.log
        if log.filtering:
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
        self.session.lock()
        self.notify("read-only: actions that change a host are hidden until you restart the console")
        self.redraw(set())

    def action_bell(self) -> None:
        self.session.bell = not self.session.bell
        self.notify(f"bell on alerts: {'on' if self.session.bell else 'off'}", timeout=2)
        self.redraw(set())

    def action_help(self) -> None:
        self.app.push_screen(HelpScreen())

    async def action_quit(self) -> None:
        await self.app.action_quit()

    # --------------------------------------------------------------- actions

    def action_kill(self) -> None:
        self.operate(OPERATIONS["kill"])

    def action_relaunch(self) -> None:
        self.operate(OPERATIONS["relaunch"])

    def action_restore(self) -> None:
        self.operate(OPERATIONS["restore"])

    def action_rollback(self) -> None:
        self.operate(OPERATIONS["rollback"])

    def action_probe(self) -> None:
        self.operate(OPERATIONS["probe"])

    def action_capture(self) -> None:
        if capture("") is None:
            self.notify("capture is not available yet in this version of sglconsole", severity="warning")
            return
        server = self.server
        default = f"{server.profile_name or 'captured'}-{server.port}" if server else "captured"
        self.app.push_screen(AskScreen("Save the running config as profile:", default), self._captured_as)

    def _captured_as(self, name: str | None) -> None:
        op = capture(name) if name else None
        if op is not None:
            self.operate(op)

    def operate(self, op: Operation) -> None:
        server = self.server
        if server is None:
            return
        target = (server.host, server.port)
        self.session.busy.add(target)
        self.refresh_bindings()
        self.run_worker(self._perform(op, *target), group="ops", name=f"{op.name} {server.key}", exit_on_error=False)

    async def _perform(self, op: Operation, host: str, port: int) -> None:
        try:
            await perform(op, host, port, self.session, self)
        finally:
            self.session.busy.discard((host, port))
            self.refresh_bindings()

    # ----------------------------------------------- what perform() calls back

    async def confirm(self, plan: Plan) -> bool:
        return bool(await self.app.push_screen_wait(ConfirmScreen(plan)))

    def progress(self, record: ActionRecord) -> None:
        self.query_one(ProgressPanel).show(record)
        self.refresh_bindings()

    def finished(self, record: ActionRecord) -> None:
        self.progress(record)
        severity = "information" if record.ok else "error"
        self.notify(f"{record.action} {record.target}: {record.summary}", severity=severity, timeout=10)
        self.update_detail(self.session.clock())

    def refused(self, message: str) -> None:
        self.notify(message, severity="warning", timeout=6)
