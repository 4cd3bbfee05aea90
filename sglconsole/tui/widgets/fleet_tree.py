"""The fleet on the left: hosts (GPUs, reachability, worst status) and their servers under them."""

from __future__ import annotations

from textual.widgets import Tree
from textual.widgets.tree import TreeNode

from sglconsole.state.fleet import FleetState, HostState, Status
from sglconsole.state.statuses import CALM
from sglconsole.tui.coalesce import Key, router_key, router_of
from sglconsole.tui.paint.fleet import host_label, server_label
from sglconsole.tui.paint.palette import Palette
from sglconsole.tui.paint.precursors import server_marks
from sglconsole.tui.paint.router import router_label
from sglconsole.tui.widgets.common import palette, width


def _relabel(node: TreeNode[Key], label) -> None:
    """Set a label only when it reads differently: an unchanged line costs no redraw."""
    if node.label != label:
        node.set_label(label)


class FleetTree(Tree[Key]):
    def __init__(self, fleet: FleetState, **kwargs):
        super().__init__("fleet", **kwargs)
        self.fleet = fleet
        self.show_root = False
        self.guide_depth = 2
        self._by_key: dict[Key, TreeNode[Key]] = {}
        self._now = 0.0

    def on_mount(self) -> None:
        for name in self.fleet.hosts:
            self._by_key[(name, None)] = self.root.add("", data=(name, None), expand=True)
        for name in self.fleet.routers:  # after the hosts: a router is read with its servers
            self._by_key[router_key(name)] = self.root.add_leaf("", data=router_key(name))
        self.sync(set(self.fleet.hosts), 0.0)

    def on_resize(self) -> None:
        self.sync(set(self.fleet.hosts), self._now)

    def sync(self, hosts: set[str], now: float) -> None:
        """Relabel these hosts and their servers; add servers that appeared, drop ones that left."""
        self._now = now
        colours, cells = palette(self), width(self)  # once a sync: every label reads them
        for name in hosts:
            host = self.fleet.hosts.get(name)
            node = self._by_key.get((name, None))
            if host is not None and node is not None:
                _relabel(node, host_label(host, colours, now, cells - 2))  # after the ▼
                self._sync_servers(host, node, colours, cells)
        for name, router in self.fleet.routers.items():  # few, and cheap when unchanged
            node = self._by_key.get(router_key(name))
            if node is not None:
                _relabel(node, router_label(router, self.fleet, colours, cells - 2))

    def _sync_servers(
        self, host: HostState, node: TreeNode[Key], colours: Palette, cells: int
    ) -> None:
        wanted = sorted(host.servers)
        have = [child.data[1] for child in node.children]
        if have != wanted:
            node.remove_children()
            for port in wanted:
                self._by_key[(host.name, port)] = node.add_leaf("", data=(host.name, port))
        signs = server_marks(host, self._now)  # the signs before an outage that hit each
        for port in wanted:
            label = server_label(
                host.servers[port], colours, cells - 3, signs.get(port, "")
            )  # after the guide
            _relabel(self._by_key[(host.name, port)], label)

    @property
    def selected(self) -> Key | None:
        node = self.cursor_node
        return None if node is None else node.data

    def node_for(self, key: Key) -> TreeNode[Key] | None:
        return self._by_key.get(key)

    def select(self, key: Key) -> None:
        node = self._by_key.get(key)
        if node is not None:
            self.move_cursor(node)

    def problem(self, direction: int) -> Key | None:
        """The next (or previous) host or server that is not fine, wrapping around."""
        order = self._order()
        if not order:
            return None
        here = order.index(self.selected) if self.selected in order else -1
        for step in range(1, len(order) + 1):
            key = order[(here + direction * step) % len(order)]
            if not self._calm(key):
                return key
        return None

    def _order(self) -> list[Key]:
        keys: list[Key] = []
        for name, host in self.fleet.hosts.items():
            keys.append((name, None))
            keys += [(name, port) for port in sorted(host.servers)]
        return keys + [router_key(name) for name in self.fleet.routers]

    def _calm(self, key: Key) -> bool:
        router = self.fleet.routers.get(router_of(key) or "")
        if router is not None:
            return router.reachable is not False
        server = self.fleet.server(*key) if key[1] is not None else None
        if server is not None and any(route.problem for route in server.view.routes):
            return False  # serving nobody, or in its router but down
        return self._status(key) in CALM

    def _status(self, key: Key) -> Status:
        host = self.fleet.hosts[key[0]]
        if key[1] is None:
            return (
                Status.UP if host.reachable is not False else Status.UNREACHABLE
            )  # a host's own problems
        server = host.servers.get(key[1])
        return server.status if server is not None else Status.UNKNOWN

    def reveal(self, key: Key) -> None:
        """Select a node, opening its host first if it was collapsed."""
        parent = self._by_key.get((key[0], None)) if key[1] is not None else None
        if parent is not None and not parent.is_expanded:
            parent.expand()
        self.call_after_refresh(self.select, key)
