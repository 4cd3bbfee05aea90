"""The container agent listens to the engine's own events: a container started, renamed or stopped
on a host is seen within a second or two, and nothing is polled meanwhile (no `ps` while the
host is quiet); where the engine's `events` cannot run, `ps` each interval still finds it. Real
Docker and Podman on a simulated host behind real sshd; every CLI call the console makes through
the host's own `docker`/`podman` is counted by a wrapper in front of it."""

from __future__ import annotations

import asyncio
import logging
import shlex
import time

from sglconsole import config
from sglconsole.remote.monitor import FleetMonitor
from sglconsole.sim.fleet import engines
from tests.containers import fresh_container_fleet  # noqa: F401
from tests.e2e.test_status import wait_for

QUIET_S = 11.0  # over two of the agent's 5 s intervals: a polling agent runs `ps` twice in it
SEEN_S = 2.5  # an event's look: ~0.2 s batching + `ps` + `inspect` over a busy machine


def _count_calls(host, kind: str, events_fail: bool = False):
    """The host's `kind` CLI behind a wrapper that writes each call's subcommand to a file (and,
    with `events_fail`, refuses `events` as an engine without an events backend would)."""
    real = host.root / "bin" / f"{kind}-counted"
    (host.root / "bin" / kind).rename(real)
    calls = host.root / f"{kind}-calls"
    calls.write_text("")
    refuse = (
        'if [ "$1" = events ]; then echo "Error: events backend unavailable" >&2; exit 125; fi\n'
    )
    script = (
        f'#!/bin/sh\necho "$1" >> {shlex.quote(str(calls))}\n'
        f"{refuse if events_fail else ''}"
        f'exec {shlex.quote(str(real))} "$@"\n'
    )
    (host.root / "bin" / kind).write_text(script)
    (host.root / "bin" / kind).chmod(0o755)
    return lambda: calls.read_text().split()


def _probe(engine, name: str) -> None:
    """A plain (not SGLang) container: every container of the engine is the host's to know."""
    mounts = [
        arg for path in ("/usr", "/lib", "/lib64", "/bin") for arg in ("-v", f"{path}:{path}:ro")
    ]
    engine.run("run", "-d", "--name", name, "--network", "host", *mounts,
               engines.image_name(engine), "/bin/sleep", "300")  # fmt: skip
    engine.containers.append(name)


def _named(state, name: str, prefix: str):
    return [info for info in state.hosts[name].containers if info.name.startswith(prefix)]


async def test_a_change_is_seen_at_once_and_nothing_is_polled_meanwhile(fresh_container_fleet):  # noqa: F811
    fleet = fresh_container_fleet
    (name,) = fleet.hosts
    host = fleet.hosts[name]
    kind = host.spec.engines[0]
    engine = fleet.engine(name, kind)
    calls = _count_calls(host, kind)
    async with FleetMonitor(config.load(fleet.config_path)) as monitor:
        state = monitor.state
        server = state.server(name, 30000)
        await wait_for(lambda: server.container, timeout=40, state=state)
        await asyncio.sleep(2.0)  # the first looks and the version question are done
        before = len(calls())
        await asyncio.sleep(QUIET_S)
        quiet = calls()[before:]
        assert quiet.count("ps") == 0, quiet  # asleep while nothing happens

        started = time.monotonic()
        _probe(engine, "probe")
        await wait_for(lambda: _named(state, name, "probe"), timeout=SEEN_S, state=state)
        engine.run("rename", "probe", "probe-renamed")
        await wait_for(
            lambda: [i.name for i in _named(state, name, "probe")] == ["probe-renamed"],
            timeout=SEEN_S,
            state=state,
        )
        engine.run("stop", "-t", "0", "probe-renamed", timeout=60)
        await wait_for(
            lambda: [i.running for i in _named(state, name, "probe")] == [False],
            timeout=SEEN_S,
            state=state,
        )
        assert time.monotonic() - started < 3 * SEEN_S + 10
        assert calls().count("events") == 1  # one stream, all along
    assert server.container is not None and server.container.name == "sglang-30000"


async def test_without_an_events_backend_ps_still_finds_containers(fresh_container_fleet, caplog):  # noqa: F811
    caplog.set_level(logging.INFO, logger="sglconsole.remote.feeds.containers")
    fleet = fresh_container_fleet
    (name,) = fleet.hosts
    host = fleet.hosts[name]
    kind = host.spec.engines[0]
    engine = fleet.engine(name, kind)
    calls = _count_calls(host, kind, events_fail=True)
    async with FleetMonitor(config.load(fleet.config_path)) as monitor:
        state = monitor.state
        server = state.server(name, 30000)
        await wait_for(lambda: server.container, timeout=40, state=state)
        assert state.hosts[name].engines[kind] == ("ok", None)  # no stream is no engine error
        _probe(engine, "probe")
        await wait_for(lambda: _named(state, name, "probe"), timeout=15, state=state)
        await asyncio.sleep(6)  # another interval: polled again
    seen = calls()
    assert seen.count("events") == 1  # refused once, tried again only after a minute
    said = [r.getMessage() for r in caplog.records if "events unavailable" in r.getMessage()]
    assert len(said) == 1 and "events backend unavailable" in said[0], said  # once, why
    assert seen.count("ps") >= 3, seen
