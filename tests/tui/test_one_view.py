"""One published view per server: every view shows the same status and numbers at the same moment,
and the numbers belong to one process (a killed server has none, a new pid starts empty)."""

from __future__ import annotations

import json
import re

from sglconsole import config
from sglconsole.core.processes import ProcessView, ProcInfo, ServerProcess
from sglconsole.state.fleet import FleetState, Sample, Status
from sglconsole.state.ingest import take_line
from sglconsole.state.json_view import fleet_json
from sglconsole.tui.app import make_app
from sglconsole.tui.paint.labels import tok_s, why
from sglconsole.tui.replay import Replay, load
from tests.tui.conftest import DATA
from tests.tui.helpers import plain, shown

T0 = 1_800_000_000.0


def one_server_fleet() -> FleetState:
    cfg = config.Config(
        config.HostsFile.model_validate(
            {
                "hosts": {
                    "h": {"address": "127.0.0.1", "servers": [{"port": 30000, "profile": "p"}]}
                },
                "profiles": {"p": {"args": ["--model-path", "m"]}},
            }
        ),
        None,
    )
    fleet = FleetState(cfg)
    fleet.hosts["h"].reachable = True
    return fleet


def process(pid: int, start: float) -> ServerProcess:
    main = ProcInfo(
        pid,
        1,
        pid,
        pid,
        "S",
        "python3",
        ("python3", "-m", "sglang.launch_server", "--model-path", "m"),
        start,
        0,
        main=True,
    )
    return ServerProcess(main, 30000, (), (0,), 1000)


def run(fleet: FleetState, proc: ServerProcess | None, now: float) -> None:
    host = fleet.hosts["h"]
    host.view = ProcessView((proc,) if proc else (), (), (), False)
    server = host.servers[30000]
    if proc is None:
        server.process_gone()  # as the watcher does when it no longer sees it
    elif server.process is None or server.process.main.pid != proc.main.pid:
        server.new_process(proc)
    server.health = "ok"
    server.ready_seen_at = proc.main.start + 1 if proc else None
    fleet.publish("h", now)


def decode(fleet: FleetState, when: float, tok_s: float) -> None:
    fleet.hosts["h"].servers[30000].history.append(
        Sample(
            time=when,
            gen_throughput=tok_s,
            accept_len=2.5,
            accept_rate=0.6,
            running_req=2,
            queue_req=0,
            token_usage=0.3,
            after_idle=False,
        )
    )


def test_numbers_belong_to_one_process():
    fleet = one_server_fleet()
    server = fleet.hosts["h"].servers[30000]
    run(fleet, process(100, T0), T0 + 5)
    decode(fleet, T0 + 10, 68.8)
    fleet.publish("h", T0 + 11)
    assert (server.status, server.view.tok_s, server.view.load.accept_len) == (Status.UP, 68.8, 2.5)

    run(fleet, None, T0 + 20)  # killed
    assert server.status == Status.DOWN
    assert (server.view.tok_s, server.view.load, server.view.throughput, server.view.pid) == (
        None,
        None,
        (),
        None,
    )
    assert fleet_json(fleet, T0 + 20)["hosts"]["h"]["servers"][0]["tok_s"] is None

    run(fleet, process(200, T0 + 30), T0 + 31)  # relaunched: the old decode line is not this pid's
    assert (server.view.pid, server.view.tok_s, server.view.load, server.view.throughput) == (
        200,
        None,
        None,
        (),
    )
    decode(fleet, T0 + 40, 70.5)
    fleet.publish("h", T0 + 41)
    assert (server.view.tok_s, server.view.throughput) == (70.5, (70.5,))


def test_a_line_of_the_previous_process_in_a_shared_log_is_not_counted():
    """The log tail read at connect holds the old pid's last decode line: it predates this pid."""
    fleet = one_server_fleet()
    decode(fleet, T0 - 30, 552.05)  # the previous server's, in the same log file
    run(fleet, process(300, T0), T0 + 3)
    view = fleet.hosts["h"].servers[30000].view
    assert (view.tok_s, view.load) == (None, None)


def test_a_late_line_of_a_containers_old_start_is_no_sample_of_the_new():
    """`podman restart`: the engine's follow of the old start can deliver its last decode lines
    after the console saw the new pid (CI, a loaded machine); they are the old pid's and stay out
    of the new process's history and numbers."""
    fleet = one_server_fleet()
    server = fleet.hosts["h"].servers[30000]
    line = (
        "[2027-01-15 08:00:{:02d}] Decode batch, #running-req: 2, #token: 900, "
        "token usage: 0.01, gen throughput (token/s): {}, #queue-req: 0"
    )
    run(fleet, process(93, T0), T0 + 5)
    take_line(server, line.format(10, "88.00"), T0 + 10, writer=93)
    run(fleet, process(325, T0 + 20), T0 + 21)  # restarted: a new main process
    take_line(server, line.format(11, "88.50"), T0 + 22, writer=93)  # the old start's, late
    fleet.publish("h", T0 + 22)
    assert [sample.pid for sample in server.history] == []
    assert server.view.tok_s is None
    take_line(server, line.format(40, "90.00"), T0 + 41, writer=325)  # the new start's own
    assert [sample.pid for sample in server.history] == [325]


def test_status_json_has_schema_version_time_generation_and_drift():
    fleet = one_server_fleet()
    run(fleet, process(100, T0), T0 + 5)
    out = json.loads(json.dumps(fleet_json(fleet, T0 + 5)))
    assert (
        out["schema_version"]
        and out["generated_at"] == T0 + 5
        and out["generation"] == fleet.generation
    )
    server = out["hosts"]["h"]["servers"][0]
    assert {"drift", "drift_count", "generation", "status", "tok_s"} <= set(server)
    assert server["drift"] is None  # not compared yet: not "no drift"


def tree_line(app, key) -> str:
    return plain(app.main.tree.node_for(key).label)


def moment(app, replay, key) -> dict:
    """What the tree label and the detail header show now, against the fleet of the same moment."""
    server = replay.fleet.server(*key)
    tree, header = tree_line(app, key), shown(app, "#server-header")
    status = server.status.value
    agree = status in tree and status in header.splitlines()[0]
    tok = server.view.tok_s
    if tok is not None:
        number = tok_s(tok)
        agree = agree and number in tree
        agree = agree and re.search(rf"\b{re.escape(number)}\b tok/s", header) is not None
    return {"agree": agree, "tok": tok, "tree": tree, "header": header}


async def test_tree_pane_and_top_bar_agree_at_every_step_of_a_recording():
    """Step through the demo recording; after each batch the selected server's status and tok/s
    read the same in the tree label, the detail header and the JSON of the same moment."""
    replay = Replay(load(DATA / "demo.jsonl"))
    app = make_app(None, replay=replay)
    key = ("ct129", 30000)
    async with app.run_test(size=(160, 48)) as pilot:
        replay.until(replay.recording.start + 2)
        await pilot.pause(0.3)
        app.main.tree.select(key)
        compared = 0
        for step in range(1, 30):
            replay.until(replay.recording.start + 2 + step)
            # the batch (200 ms) is drawn within a few ticks; a loaded machine may need more
            for _ in range(30):
                await pilot.pause(0.1)
                seen = moment(app, replay, key)
                if seen["agree"]:
                    break
            assert seen["agree"], (step, seen)
            compared += seen["tok"] is not None
        assert compared > 5


def test_slow_says_what_differs_from_the_profile_in_one_line():
    """SLOW used to hide DRIFT (a relaunch with other flags is the likeliest cause): the one-line
    reason says both, and compares like with like (per request here: 2 requests ran)."""
    from sglconsole.core.drift import Report, Row, State

    fleet = one_server_fleet()
    server = fleet.hosts["h"].servers[30000]
    server.profile = server.profile.model_copy(
        update={"baseline": config.Baseline(gen_throughput=64, concurrency=2)}
    )
    run(fleet, process(100, T0), T0 + 5)
    for second in (10, 12, 14, 16):
        decode(fleet, T0 + second, 34.7)
    fleet.publish("h", T0 + 17)
    assert server.status == Status.SLOW
    assert server.reason == "34.7 tok/s vs 64 baseline (54%)"

    def row(kind, name, running):
        return Row(
            kind=kind,
            name=name,
            flag=name,
            profile="3",
            running=running,
            resolved="3",
            state=State.DIFFERENT,
            performance=True,
        )

    server.drift = Report(
        rows=[
            row("flag", "--speculative-num-steps", "1"),
            row("flag", "--speculative-num-draft-tokens", "2"),
            row("env", "SGLANG_ENABLE_SPEC_V2", None),
        ]
    )
    fleet.publish("h", T0 + 18)
    assert server.status == Status.SLOW
    # status, JSON and alerts say the reason alone: only the TUI has a `d` to name
    assert server.reason == "34.7 tok/s vs 64 baseline (54%); config differs (2 flags, 1 env)"
    assert (
        why(server)
        == "34.7 tok/s vs 64 baseline (54%); config differs (2 flags, 1 env; d shows how)"
    )
    assert "d shows how" not in json.dumps(fleet_json(fleet))
