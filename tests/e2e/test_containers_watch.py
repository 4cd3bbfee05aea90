"""Watching containerised SGLang servers end to end: a simulated server inside a real Docker and
a real Podman container on a simulated host behind real sshd, seen by `status --json` (its
container, image, SGLang inside, PIDs, GPUs) and by the monitor (its log, tok/s, a restart)."""

from __future__ import annotations

import json
import os
import signal
import subprocess

import jsonschema

from sglconsole import config
from sglconsole.commands.schema import render
from sglconsole.core.containers import split_stamp
from sglconsole.remote.monitor import FleetMonitor
from sglconsole.sim.fleet import engines
from sglconsole.sim.fleet.engines import inside
from sglconsole.tui.app import make_app
from tests.cli import cli
from tests.containers import container_fleet, fresh_container_fleet  # noqa: F401
from tests.e2e.test_status import wait_for
from tests.tui.helpers import shown, until


def _status(fleet) -> dict:
    result = cli("status", "-c", str(fleet.config_path), "--json")
    assert result.stdout, result.stderr
    document = json.loads(result.stdout)
    jsonschema.validate(document, json.loads(render("status")))
    return document


def test_status_shows_the_server_and_its_container(container_fleet):  # noqa: F811
    fleet = container_fleet
    (name,) = fleet.hosts
    kind = fleet.hosts[name].spec.engines[0]
    engine = fleet.engine(name, kind)
    # a one-shot status on a loaded machine once showed the server without its process (pid
    # null; not reproduced since): the next one must have it, and the engine's pid at that time
    for _ in range(3):
        host = _status(fleet)["hosts"][name]
        (server,) = host["servers"]
        (inspected,) = json.loads(engine.run("inspect", "sglang-30000"))
        if server["pid"] is not None:
            break
    other = "podman" if kind == "docker" else "docker"
    assert host["container_engines"][kind] == {"state": "ok", "detail": None}
    assert host["container_engines"][other]["state"] == "absent"  # said, not an error
    assert server["managed"] and server["port"] == 30000
    assert server["pid"] == inspected["State"]["Pid"], server  # the host PID the engine reports
    titles = {child["title"] for child in server["children"]}
    assert titles >= {"sglang::scheduler", "sglang::detokenizer"}  # its host PIDs, by parentage
    assert server["gpus"] == [0]
    container = server["container"]
    assert container["engine"] == kind and container["name"] == "sglang-30000"
    assert container["id"] == inspected["Id"]
    image = "lmsysorg/sglang:latest" if kind == "docker" else "localhost/lmsysorg/sglang:latest"
    assert container["image"] == image
    assert container["image_id"].removeprefix("sha256:") == inspected["Image"].removeprefix(
        "sha256:"
    )
    assert container["restart_policy"] == "unless-stopped"
    assert container["gpus"] == ["0"] and container["network"] == "host"
    assert container["sglang_version"] in ("0.5.23", None)  # asked inside: may come later


async def test_the_log_is_the_engines_and_a_restart_starts_empty(fresh_container_fleet):  # noqa: F811
    fleet = fresh_container_fleet
    (name,) = fleet.hosts
    engine = fleet.engine(name, fleet.hosts[name].spec.engines[0])
    async with FleetMonitor(config.load(fleet.config_path)) as monitor:
        state = monitor.state
        server = state.server(name, 30000)
        await wait_for(lambda: server.container and server.view.tok_s, timeout=40, state=state)
        assert server.log_path is None  # no file: `docker logs` / `podman logs` is its log
        assert any("Decode batch" in line for line in server.log_lines)
        assert server.view.tok_s > 10  # two requests in flight on a simulated H200
        await wait_for(lambda: server.container_version, timeout=30, state=state)
        assert server.container_version == "0.5.23"  # asked of the container's own python
        before = server.container
        engine.run("restart", "-t", "2", "sglang-30000", timeout=60)
        # the engine's event renews the record and the watcher's scan finds the new process: two
        # sources, either first on a loaded machine
        await wait_for(
            lambda: (
                server.container
                and server.container.started_at != before.started_at
                and server.process
                and server.process.main.pid != before.pid
            ),
            timeout=40,
            state=state,
        )
        assert server.container.id == before.id
        pid = server.process.main.pid
        # the numbers shown are the new start's only: none of the old pid's samples remain
        assert all(sample.pid == pid for sample in server.history), (
            f"pid {pid} (ppid {server.process.main.ppid}), before {before.pid}; samples' pids "
            f"{[(sample.pid, sample.time) for sample in server.history]}; "
            f"container {server.container}"
        )
        await wait_for(lambda: server.view.tok_s, timeout=40, state=state)
        # the old start's last lines may come after the new start's first (its engine's follow
        # of the old start ends late on a loaded machine): they are the old pid's, and the next
        # decode line, a second later, is the new one's
        try:
            await wait_for(
                lambda: server.log_pid == pid and server.history[-1].pid == pid,
                timeout=10,
                state=state,
            )
        except AssertionError as exc:
            raise AssertionError(
                f"{exc}; pid {pid}, log_pid {server.log_pid}, before {before.pid}; "
                f"container {server.container}; process {server.process.main}; last samples "
                f"{[(sample.pid, sample.time) for sample in list(server.history)[-5:]]}; "
                f"last lines {list(server.log_lines)[-6:]}"
            ) from None


def test_the_status_table_says_where_it_runs(container_fleet):  # noqa: F811
    fleet = container_fleet
    (name,) = fleet.hosts
    kind = fleet.hosts[name].spec.engines[0]
    result = cli("status", "-c", str(fleet.config_path))
    assert f":30000 runs in {kind} container sglang-30000" in result.stdout, result.stdout
    assert "lmsysorg/sglang:latest (" in result.stdout and "restart unless-stopped" in result.stdout
    assert "absent" not in result.stdout  # the engine it lacks is no news


async def test_the_server_pane_shows_its_container(container_fleet):  # noqa: F811
    fleet = container_fleet
    (name,) = fleet.hosts
    kind = fleet.hosts[name].spec.engines[0]
    app = make_app(config.load(fleet.config_path))
    async with app.run_test(size=(160, 48)) as pilot:
        server = app.session.fleet.server(name, 30000)
        await until(pilot, lambda: server.container_version, 40, "the SGLang inside")
        app.main.tree.select((name, 30000))
        await pilot.pause()
        header = shown(app, "#server-header")
        assert f"in {kind} container sglang-30000" in header, header
        assert "SGLang 0.5.23 inside" in header and "GPUs 0" in header
        row = app.main.tree.node_for((name, 30000)).label.plain  # the tree says it too
        assert f"{kind}: " in row, row


async def test_a_reconnect_loses_and_repeats_no_line(fresh_container_fleet):  # noqa: F811
    fleet = fresh_container_fleet
    (name,) = fleet.hosts
    host = fleet.hosts[name]
    engine = fleet.engine(name, host.spec.engines[0])
    async with FleetMonitor(config.load(fleet.config_path)) as monitor:
        state = monitor.state
        server = state.server(name, 30000)
        await wait_for(lambda: server.view.tok_s, timeout=40, state=state)
        killed = [pid for pid in host.pids("sshd") if not os.kill(pid, signal.SIGKILL)]
        assert killed, "no sshd session to kill"
        await wait_for(lambda: state.hosts[name].reachable is False, timeout=20, state=state)
        await wait_for(lambda: state.hosts[name].reachable is True, timeout=40, state=state)
        before = len(server.log_lines)
        await wait_for(lambda: len(server.log_lines) > before + 3, timeout=30, state=state)
        read = [line for line in server.log_lines if not line.startswith("--- sglconsole")]
        started = server.container.started_at
    # the engine's own log of this start (both streams, in time order)
    argv = [
        *inside(host),
        *engine.cli(),
        "logs",
        "--timestamps",
        "--since",
        started,
        "sglang-30000",
    ]
    done = subprocess.run(argv, capture_output=True, text=True, env=engine.env(), timeout=60)
    stamped = [split_stamp(line) for line in (done.stdout + done.stderr).splitlines()]
    written = [line for stamp, line in sorted(stamped, key=lambda item: item[0] or (0, 0))]
    assert read[0] in written, (read[:4], written[:6])
    first = written.index(read[0])
    assert read == written[first : first + len(read)]  # contiguous: none lost, none twice


def test_a_container_not_in_hosts_yaml_is_unmanaged(fresh_container_fleet):  # noqa: F811
    fleet = fresh_container_fleet
    (name,) = fleet.hosts
    host = fleet.hosts[name]
    engine = fleet.engine(name, host.spec.engines[0])
    args = ["--model-path", host.seen("models/Qwen3-8B"), "--host", "127.0.0.1", "--port", "30001"]
    engines.run_server(engine, "sglang-extra", args, gpus=[1])
    document = _status(fleet)
    servers = {server["port"]: server for server in document["hosts"][name]["servers"]}
    extra = servers[30001]
    assert extra["status"] == "UNMANAGED" and not extra["managed"], extra
    assert extra["container"]["name"] == "sglang-extra" and extra["container"]["gpus"] == ["1"]
    assert servers[30000]["container"]["name"] == "sglang-30000"  # each its own container
