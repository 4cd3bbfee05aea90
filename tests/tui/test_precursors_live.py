"""The signs before an outage in the console, driven over real SSH: a GPU Xid on the host shows
in its pane with the server it hit, marks that server's rows (pane and tree), and is told in the
server's header; a login that may not read the kernel log is told so in the pane."""

from __future__ import annotations

from sglconsole import config
from sglconsole.tui.app import make_app
from tests.e2e.test_precursors import FAST, switch, two_servers
from tests.tui.helpers import shown, until

LARGE = (160, 48)


async def test_an_xid_shows_in_the_host_pane_and_the_header_of_the_server_it_hit(fleet_factory):
    fleet = fleet_factory([two_servers()], extra_config=FAST)
    app = make_app(config.load(fleet.config_path))
    async with app.run_test(size=LARGE) as pilot:
        host = app.session.fleet.hosts["gpu4"]
        await until(pilot, lambda: host.signs.kernel_source and host.signs.memory, 60, "signs")
        await until(pilot, lambda: "Before an outage" in shown(app, "#host-body"), 10, "section")
        assert "memory: " in shown(app, "#host-body") and "kernel log: following dmesg" in shown(
            app, "#host-body"
        )
        switch(fleet, kernel_events=[{"id": 1, "kind": "xid", "gpu": 1, "xid": 79}])
        await until(pilot, lambda: "Xid :30001: GPU Xid 79" in shown(app, "#host-body"), 30, "Xid")
        body = shown(app, "#host-body")
        (row,) = [line for line in body.splitlines() if line.strip().startswith("30001")]
        assert "Xid" in row, body
        (other,) = [line for line in body.splitlines() if line.strip().startswith("30000")]
        assert "Xid" not in other, body
        tree = app.main.tree  # the fleet tree's rows: the same mark
        await until(pilot, lambda: "Xid" in str(tree.node_for(("gpu4", 30001)).label), 5, "mark")
        assert "Xid" not in str(tree.node_for(("gpu4", 30000)).label)
        await pilot.press("j", "j")  # down the fleet: gpu4:30000, then gpu4:30001
        await until(pilot, lambda: app.main.selected == ("gpu4", 30001), 5, "gpu4:30001 selected")
        await until(
            pilot,
            lambda: "before an outage: GPU Xid 79" in shown(app, "#server-header"),
            10,
            "the header tells the Xid",
        )


async def test_a_login_that_may_not_read_the_kernel_log_sees_why_in_the_pane(fleet_factory):
    fleet = fleet_factory([two_servers()], extra_config=FAST)
    switch(fleet, kernel_log="denied")
    app = make_app(config.load(fleet.config_path))
    async with app.run_test(size=LARGE) as pilot:
        await until(
            pilot,
            lambda: "kernel log not readable by this login" in shown(app, "#host-body"),
            60,
            "the pane says the kernel log is not readable",
        )
        assert "are not seen here" in shown(app, "#host-body")
