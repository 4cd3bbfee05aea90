"""Routers on screen: a server's place in its routers (tree mark, header lines) and a router's own
view (its reachability and every worker with its health and load).

Everything here renders published facts: the routes of a server's view (state.routing) and the
router states the router feed wrote; nothing is derived at draw time.
"""

from __future__ import annotations

from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text

from sglconsole.core.text import clean, fmt_duration
from sglconsole.state.fleet import FleetState, ServerState
from sglconsole.state.routing import RouterState, RouteView, Routing
from sglconsole.tui.paint.labels import shorten
from sglconsole.tui.paint.palette import Palette

MARK = {
    Routing.SERVING_NOBODY: "⇄ nobody",
    Routing.IN_ROUTER_DOWN: "⇄ down",
    Routing.BREAKER_OPEN: "⇄ breaker",
}
"""The tree's short word for a router problem of a server (the pane says it whole)."""


def tree_mark(server: ServerState) -> str:
    """'⇄ nobody' / '⇄ down' / '⇄ breaker' for the server's first router problem, else ''."""
    return next((MARK[route.routing] for route in server.view.routes if route.problem), "")


def route_style(route: RouteView, palette: Palette):
    if route.problem:
        return palette.bad
    if route.routing == Routing.SERVING:
        return palette.good
    if route.routing in (Routing.UNHEALTHY, Routing.ROUTER_UNREACHABLE):
        return palette.warn
    return palette.muted


def route_lines(server: ServerState, palette: Palette, now: float) -> list[Text]:
    """The detail header's lines: one per router in front of the server."""
    lines = []
    for route in server.view.routes:
        text = Text(clean(route.describe()), style=route_style(route, palette))
        if route.problem and route.since is not None:
            text.append(f" for {fmt_duration(max(0.0, now - route.since))}", style=palette.muted)
        lines.append(text)
    return lines


def router_counts(router: RouterState, fleet: FleetState) -> tuple[int, int, int]:
    """(healthy workers, configured servers, router problems among them)."""
    healthy = sum(1 for worker in router.workers if worker.healthy) if router.reachable else 0
    problems = sum(1 for route in _routes(router, fleet) if route is not None and route.problem)
    return healthy, len(router.worker_urls), problems


def router_label(router: RouterState, fleet: FleetState, palette: Palette, width: int) -> Text:
    name = shorten("⇄ " + clean(router.name), max(6, width // 2))
    text = Text(name, style="bold")
    if router.reachable is None:
        text.append(" asking…", style=palette.muted)
    elif router.reachable is False:
        text.append(" UNREACHABLE ", style=palette.bad)
    else:
        healthy, servers, problems = router_counts(router, fleet)
        text.append(f" {healthy}/{servers} healthy", style=palette.muted)
        if problems:
            text.append(f" {problems} ⚠", style=palette.bad)
    return text


def router_view(router: RouterState, fleet: FleetState, palette: Palette, now: float) -> Group:
    parts: list[RenderableType] = [_title(router, palette, now)]
    parts += router_canary(router, palette, now)
    parts.append(Text("\nWorkers", style="bold underline"))
    parts.append(_workers(router, fleet, palette))
    unknown = [worker for worker in router.workers if router.server_of(worker.url) is None]
    if unknown:
        parts.append(Text("\nListed by the router, not in hosts.yaml", style="bold underline"))
        for worker in unknown:
            health = "healthy" if worker.healthy else "unhealthy"
            parts.append(Text(f"{clean(worker.url)}  {health}  load {worker.load}"))
    return Group(*parts)


def router_canary(router: RouterState, palette: Palette, now: float) -> list[Text]:
    """The canary asked through the router (state.canary): nothing before its first run."""
    run = router.canary.runs[-1] if router.canary.runs else None
    if run is None:
        return []
    style = palette.good if run.ok else palette.bad
    text = Text.assemble(("canary through it ", "bold"), (run.verdict, style))
    text.append(f" {router.canary.marks(None)[-24:]}", style=style)
    text.append(f" ({fmt_duration(now - run.time)} ago)", style=palette.muted)
    if run.finding:
        text.append(f" {clean(run.finding)}", style=palette.bad)
    return [text]


def _title(router: RouterState, palette: Palette, now: float) -> Text:
    text = Text.assemble(("router ", "bold"), (clean(router.name), "bold"))
    text.append(f"  {clean(router.where)}", style=palette.muted)
    if router.reachable is None:
        text.append("\nasking for its workers…", style=palette.muted)
    elif router.reachable is False:
        text.append("\nUNREACHABLE: ", style=palette.bad)
        text.append(clean(router.error or "no answer"), style=palette.bad)
        if router.workers:
            text.append("\nthe workers below are its last answer", style=palette.muted)
    else:
        asked = "" if router.asked_at is None else f" {fmt_duration(now - router.asked_at)} ago"
        count = len(router.workers)
        listed = f"{count} worker{'' if count == 1 else 's'} listed"
        text.append(f"\nanswers: {listed}{asked}", style=palette.good)
    return text


def _workers(router: RouterState, fleet: FleetState, palette: Palette) -> Table:
    table = Table(box=None, pad_edge=False, show_edge=False, expand=False)
    # the gateway's /metrics columns only where they were read (a metrics_port given)
    gauges = any(row.breaker is not None or row.inflight is not None for row in router.workers)
    for column, justify in (
        ("server", "left"),
        ("status", "left"),
        ("listed", "left"),  # by the router: healthy, unhealthy, or - (not listed)
        ("load", "right"),  # the router's count in flight to it
        *((("breaker", "left"), ("flight", "right")) if gauges else ()),
        ("run", "right"),  # the server's own running requests
        ("", "left"),
    ):
        table.add_column(column, justify=justify, no_wrap=column != "")
    for key, route in zip(router.worker_urls, _routes(router, fleet), strict=True):
        host, _, port = key.rpartition(":")
        server = fleet.server(host, int(port))
        worker = router.worker(router.worker_urls[key])
        listed = "-" if worker is None else ("healthy" if worker.healthy else "unhealthy")
        load = server.view.load if server is not None else None
        breaker = "-" if worker is None or worker.breaker is None else worker.breaker
        flight = "-" if worker is None or worker.inflight is None else str(worker.inflight)
        table.add_row(
            clean(key),
            palette.badge(server.status) if server is not None else Text("?"),
            listed,
            "-" if worker is None or worker.load is None else str(worker.load),
            *(
                (Text(breaker, style=palette.bad if breaker == "open" else ""), flight)
                if gauges
                else ()
            ),
            "-" if load is None or load.running_req is None else str(load.running_req),
            Text(route.routing.value, style=route_style(route, palette)) if route else Text(""),
        )
    return table


def _routes(router: RouterState, fleet: FleetState) -> list[RouteView | None]:
    """Each configured server's published route through this router, in worker_urls order."""
    out = []
    for key in router.worker_urls:
        host, _, port = key.rpartition(":")
        server = fleet.server(host, int(port))
        views = server.view.routes if server is not None else ()
        out.append(next((route for route in views if route.router == router.name), None))
    return out
