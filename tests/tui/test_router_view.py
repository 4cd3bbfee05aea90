"""The router view against the REAL SGLang router (the sglang-router wheel) in front of simulated
servers: the console reads its worker list, and the tree, the detail pane, `status --json` and
the router's own node say the same thing about each server's place in it.

The router runs on the simulated host, started over SSH (bench/router_restore.py), so it reaches
the servers at their real addresses and the console reaches it through an SSH port forward.
"""

from __future__ import annotations

import json

import pytest

from bench.router_restore import routed_host, routers_yaml, start_router
from sglconsole import config
from sglconsole.remote.ssh.connection import SshFleet
from sglconsole.state.json_view import fleet_json
from sglconsole.state.routing import Routing
from sglconsole.state.status_schema import StatusJson
from sglconsole.tui.app import make_app
from sglconsole.tui.coalesce import router_key
from sglconsole.tui.screens.confirm import ConfirmScreen
from tests.cli import cli
from tests.tui.helpers import actions_done, plain, shown, until

pytestmark = pytest.mark.slow

SIZE = (160, 48)
URL = "http://127.0.0.1:{}"


def routers_with_a_dead_one() -> dict:
    """`front`, the real router, and `gone`, a router nobody listens for (a closed loopback
    port), in front of r1:30000 too."""
    routers = routers_yaml(2)["routers"]
    routers["gone"] = {"url": "http://127.0.0.1:9", "servers": ["r1:30000"]}
    return {"routers": routers}


def routing(app, port: int, router: str = "front") -> Routing | None:
    server = app.session.fleet.server("r1", port)
    route = next((r for r in server.view.routes if r.router == router), None) if server else None
    return None if route is None else route.routing


def tree_line(app, port: int) -> str:
    return plain(app.main.tree.node_for(("r1", port)).label)


def json_route(out: dict, port: int, router: str = "front") -> dict:
    server = next(s for s in out["hosts"]["r1"]["servers"] if s["port"] == port)
    return next(r for r in server["routers"] if r["router"] == router)


async def test_serving_nobody_and_in_router_but_down_read_the_same_everywhere(fleet_factory):
    fleet = fleet_factory([routed_host(2)], extra_config=routers_with_a_dead_one())
    cfg = config.load(fleet.config_path)
    ssh = SshFleet(cfg.hosts)
    try:
        router = await start_router(ssh, 2)
        app = make_app(cfg)
        async with app.run_test(size=SIZE) as pilot:
            await until(
                pilot,
                lambda: routing(app, 30000) == routing(app, 30001) == Routing.SERVING,
                40,
                "both servers in router front",
            )
            # the router nobody answers: shown as such, and the rest keeps updating
            await until(
                pilot, lambda: routing(app, 30000, "gone") == Routing.ROUTER_UNREACHABLE, 20, "gone"
            )
            assert app.session.fleet.routers["gone"].reachable is False
            app.main.tree.select(router_key("gone"))
            await until(pilot, lambda: "UNREACHABLE" in shown(app, "#router-body"), 5, "gone")
            assert "UNREACHABLE" in plain(app.main.tree.node_for(router_key("gone")).label)

            app.main.tree.select(router_key("front"))
            await until(pilot, lambda: "r1:30001" in shown(app, "#router-body"), 5, "front")
            body = shown(app, "#router-body")
            assert "2 workers listed" in body and body.count("healthy") >= 2, body
            assert "⇄ front 2/2 healthy" in plain(app.main.tree.node_for(router_key("front")).label)

            # taken out through the router's own API, behind the console's back
            assert await router.remove(URL.format(30001))
            await until(
                pilot, lambda: routing(app, 30001) == Routing.SERVING_NOBODY, 20, "serving nobody"
            )
            assert routing(app, 30000) == Routing.SERVING
            await until(pilot, lambda: "⇄ nobody" in tree_line(app, 30001), 5, "the tree's mark")
            assert "⇄" not in tree_line(app, 30000)
            app.main.tree.select(("r1", 30001))
            await until(pilot, lambda: "serving nobody" in shown(app, "#server-header"), 5, "pane")
            assert "router front: serving nobody (up, but the router does not list" in shown(
                app, "#server-header"
            )
            out = fleet_json(app.session.fleet)
            StatusJson.model_validate(out)  # the schema knows every key
            assert json_route(out, 30001)["routing"] == "serving nobody"
            assert json_route(out, 30001)["problem"] is True
            assert json_route(out, 30000)["routing"] == "in router"
            workers = {w["server"]: w for w in out["routers"]["front"]["workers"]}
            assert set(workers) == {"r1:30000"} and workers["r1:30000"]["healthy"] is True
            # n finds it (the host's servers are UP: only the router says something is wrong)
            app.main.tree.select(("r1", None))
            await pilot.press("n")
            await until(pilot, lambda: app.main.selected == ("r1", 30001), 5, "n to r1:30001")

            # the CLI, another process, reads the same router
            status = cli("status", "--json", "-c", str(fleet.config_path))
            assert status.returncode in (0, 1), status.stderr
            printed = json.loads(status.stdout)
            StatusJson.model_validate(printed)
            assert json_route(printed, 30001)["routing"] == "serving nobody"
            assert json_route(printed, 30000)["routing"] == "in router"
            assert json_route(printed, 30000, "gone")["routing"] == "router unreachable"
            assert printed["routers"]["gone"]["reachable"] is False
            table = cli("status", "-c", str(fleet.config_path)).stdout
            assert "router front  r1:39000  1/1 workers healthy" in table, table
            assert "r1:30001: router front: serving nobody" in table
            assert "router gone  http://127.0.0.1:9  UNREACHABLE" in table

            # killed while the router still lists it
            pid = app.session.fleet.server("r1", 30000).process.main.pid
            assert (await ssh["r1"].run(["kill", "-9", str(pid)])).ok
            await until(
                pilot,
                lambda: routing(app, 30000) == Routing.IN_ROUTER_DOWN,
                20,
                "in router but down",
            )
            await until(pilot, lambda: "⇄ down" in tree_line(app, 30000), 5, "the tree's mark")
            app.main.tree.select(("r1", 30000))
            await until(
                pilot, lambda: "in router but down" in shown(app, "#server-header"), 5, "pane"
            )
            assert json_route(fleet_json(app.session.fleet), 30000)["routing"] == (
                "in router but down"
            )
    finally:
        await ssh.close()


async def test_a_restore_through_the_router_is_never_flagged_serving_nobody(fleet_factory):
    fleet = fleet_factory([routed_host(2)], extra_config=routers_yaml(2))
    cfg = config.load(fleet.config_path)
    ssh = SshFleet(cfg.hosts)
    seen: list[tuple[str | None, Routing | None]] = []
    try:
        await start_router(ssh, 2)
        app = make_app(cfg)
        async with app.run_test(size=(100, 30)) as pilot:
            await until(pilot, lambda: routing(app, 30001) == Routing.SERVING, 40, "in router")

            def watch(host, port):
                server = app.session.fleet.server("r1", 30001)
                seen.append((server.action, routing(app, 30001)))

            app.session.fleet.subscribe(watch)
            app.main.tree.select(("r1", 30001))
            await pilot.press("R")
            await until(pilot, lambda: isinstance(app.screen, ConfirmScreen), 20, "confirmation")
            await pilot.press("y")
            await until(pilot, lambda: actions_done(app), 120, "the restore")
            assert actions_done(app)[-1].ok, actions_done(app)[-1].summary
            await until(pilot, lambda: routing(app, 30001) == Routing.SERVING, 20, "back in")
    finally:
        await ssh.close()
    states = {state for _, state in seen}
    assert Routing.ACTION in states  # it was out (drained), and said so
    assert Routing.SERVING_NOBODY not in states, seen
