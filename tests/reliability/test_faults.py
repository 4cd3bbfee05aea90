"""Faults survived, end to end: real sshd, simulated hosts in their own namespaces, the live
monitor."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import pytest

from sglconsole import config
from sglconsole.actions import ActionContext, restore
from sglconsole.actions.audit import AuditLog
from sglconsole.actions.base import StageState
from sglconsole.actions.lock import host_lock
from sglconsole.remote.monitor import FleetMonitor
from sglconsole.remote.ssh.connection import SshFleet
from sglconsole.sim import gpustate
from sglconsole.sim.fleet.start import HostSpec, ServerSpec
from tests.e2e.test_actions import ct129
from tests.fleets import SSH_MODE


def quiet_host(name: str = "h200") -> HostSpec:
    return HostSpec(
        name=name,
        gpu_model="H200",
        gpu_count=1,
        models=("Qwen3-8B",),
        sglang={"startup_s": 0.3, "load": {"concurrency": 1, "max_tokens": 200}},
        servers=[
            ServerSpec(
                30000,
                "qwen8b-tp1",
                [0],
                running=["--model-path", "{models}/Qwen3-8B", "--decode-log-interval", "5"],
            )
        ],
    )


@pytest.fixture
def two_hosts(fleet_factory, tmp_path, monkeypatch):
    assert SSH_MODE == "sshd", "the fault tests need OpenSSH's sshd (run as root, like CI)"
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    return fleet_factory([ct129(), quiet_host()])


async def until(predicate, timeout: float, what: str):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return
        await asyncio.sleep(0.1)
    raise AssertionError(f"timed out waiting for {what}")


def file_lines(fleet, host: str, port: int = 30000) -> list[str]:
    return (
        (fleet.hosts[host].root / "logs" / f"sglang-{port}.log")
        .read_text(errors="replace")
        .splitlines()
    )


@dataclass
class Outcome:
    """What the monitor saw of ct129 through a fault and its recovery."""

    status: str | None  # ct129's server while the host was down
    error: str | None  # the reason shown for UNREACHABLE
    other_updated: bool  # the other host's GPUs kept updating meanwhile
    collected: list[str]  # the log lines the console holds at the end
    written: list[str]  # the log file on the host
    new_after_reconnect: int

    @property
    def contiguous(self) -> bool:
        """The collected lines are one run of the file's lines: none lost, none repeated."""
        if not self.collected or self.collected[0] not in self.written:
            return False
        start = self.written.index(self.collected[0])
        return self.collected == self.written[start : start + len(self.collected)]


async def watch(fleet, fault, recover=None, lost_within: float = 15) -> Outcome:
    cfg = config.load(fleet.config_path)
    async with FleetMonitor(cfg) as monitor:
        state = monitor.state
        server = state.server("ct129", 30000)
        other = state.hosts["h200"]
        await until(lambda: len(server.log_lines) > 5 and other.gpus, 30, "lines and GPUs")
        fault()
        await until(
            lambda: state.hosts["ct129"].reachable is False, lost_within, "ct129 UNREACHABLE"
        )
        status, error = server.status.value, state.hosts["ct129"].error
        ticks = other.gpu_time
        await until(
            lambda: other.gpu_time and other.gpu_time > ticks, 10, "the other host to keep updating"
        )
        other_updated = bool(other.reachable)
        if recover:
            recover()
        await until(lambda: state.hosts["ct129"].reachable is True, 40, "ct129 back")
        before = len(server.log_lines)
        await until(lambda: len(server.log_lines) > before + 3, 30, "new lines after the reconnect")
        collected = [line for line in server.log_lines if not line.startswith("--- sglconsole")]
        return Outcome(
            status,
            error,
            other_updated,
            collected,
            file_lines(fleet, "ct129"),
            len(server.log_lines) - before,
        )


def test_sshd_killed_mid_stream(two_hosts):
    host = two_hosts.hosts["ct129"]
    outcome = asyncio.run(watch(two_hosts, lambda: _kill_sessions(host)))
    assert outcome.status == "UNREACHABLE" and "connection lost" in outcome.error, outcome.error
    assert outcome.other_updated
    assert outcome.contiguous and outcome.new_after_reconnect > 3


def _kill_sessions(host) -> None:
    killed = []
    for pid in host.pids("sshd"):
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            continue  # a session that ended between the listing and the kill (a one-off command's)
        killed.append(pid)
    assert killed, "no sshd session to kill"


def test_sshd_frozen_then_thawed(two_hosts):
    host = two_hosts.hosts["ct129"]
    outcome = asyncio.run(
        watch(
            two_hosts,
            lambda: host.signal_ssh(signal.SIGSTOP),
            lambda: host.signal_ssh(signal.SIGCONT),
            lost_within=20,
        )
    )
    assert outcome.status == "UNREACHABLE" and "keepalive" in outcome.error, (
        outcome.error
    )  # no reset: keepalives
    assert outcome.other_updated
    assert outcome.contiguous and outcome.new_after_reconnect > 3


def test_host_reboots(two_hosts):
    def reboot():
        two_hosts.hosts["ct129"].signal_all(signal.SIGKILL)

    def back():
        two_hosts.reboot("ct129", down_for=1)

    outcome = asyncio.run(watch(two_hosts, reboot, back))
    assert outcome.status == "UNREACHABLE" and outcome.error and outcome.other_updated
    assert outcome.contiguous and outcome.new_after_reconnect > 3
    assert any(
        "The server is fired up" in line for line in outcome.collected[-400:]
    )  # the rebooted server's startup, seen


@pytest.mark.parametrize(
    "mode,expect",
    [
        ("fail", "Unknown Error"),
        ("no_driver", "NVIDIA driver"),
        ("garbage", "no GPU lines"),
        ("hang", "printed nothing"),
    ],
)
def test_nvidia_smi_faults_are_shown_as_what_they_are(fleet_factory, mode, expect):
    fleet = fleet_factory([quiet_host()])

    async def run():
        async with FleetMonitor(config.load(fleet.config_path)) as monitor:
            host = monitor.state.hosts["h200"]
            server = monitor.state.server("h200", 30000)
            await until(lambda: host.gpus, 20, "GPUs")
            gpustate.write_host(fleet.hosts["h200"].root, nvidia_smi=mode)
            await until(
                lambda: host.gpu_error and expect in host.gpu_error,
                30,
                f"gpu error {expect!r} (got {host.gpu_error!r})",
            )
            lines = len(server.log_lines)
            await until(
                lambda: len(server.log_lines) > lines, 20, "the server to keep being watched"
            )
            assert host.reachable
            gpustate.write_host(fleet.hosts["h200"].root, nvidia_smi="ok")
            await until(lambda: host.gpu_error is None, 40, "nvidia-smi back")

    asyncio.run(run())


@pytest.mark.parametrize(
    "fault,expect",
    [("500", "HTTP 500"), ("hang", "no HTTP answer"), ("garbage", "ok"), ("wrong_json", "ok")],
)
def test_http_faults_never_crash_the_monitor(fleet_factory, fault, expect):
    fleet = fleet_factory([quiet_host()])
    root = fleet.hosts["h200"].root

    async def run():
        async with FleetMonitor(config.load(fleet.config_path)) as monitor:
            server = monitor.state.server("h200", 30000)
            await until(lambda: server.health == "ok", 20, "healthy")
            data = json.loads((root / "sim" / "host.json").read_text())
            data["sglang"]["http"] = fault
            (root / "sim" / "host.json").write_text(json.dumps(data))
            await asyncio.sleep(
                6
            )  # a poll that began before the fault has ended (it may set server_info)
            server.server_info = None
            # the next poll asks again, and meets the fault
            monitor.monitors["h200"].http.info_at.clear()
            await asyncio.sleep(6)
            await until(
                lambda: server.health == expect, 20, f"health {expect!r} (got {server.health!r})"
            )
            if fault in ("garbage", "wrong_json"):
                assert server.server_info is None  # not JSON we understand: ignored, not a crash
            lines = len(server.log_lines)
            await until(lambda: len(server.log_lines) > lines, 20, "log lines still arriving")

    asyncio.run(run())


def test_log_file_rotated_truncated_deleted_and_recreated(fleet_factory):
    spec = quiet_host()
    spec.servers[0].running = None  # nothing writes this log but the test
    fleet = fleet_factory([spec])
    log = fleet.hosts["h200"].root / "logs" / "sglang-30000.log"
    written: list[str] = []

    def write(n: int, path: Path = log, mode: str = "a") -> None:
        with open(path, mode) as fh:
            for _ in range(n):
                written.append(f"[2026-12-02 10:00:{len(written) % 60:02d}] line {len(written)}")
                fh.write(written[-1] + "\n")

    async def run():
        async with FleetMonitor(config.load(fleet.config_path)) as monitor:
            server = monitor.state.server("h200", 30000)
            await until(lambda: server.log_state == "missing", 20, "a log that was never created")
            write(5)
            await until(lambda: len(_lines(server)) == 5, 10, "first lines")
            log.rename(log.with_suffix(".log.1"))  # mv + reopen, like logrotate's create
            write(3, log, "w")
            await until(lambda: len(_lines(server)) == 8, 10, "lines of the new file")
            with open(log, "r+") as fh:  # copytruncate
                fh.truncate(0)
            await asyncio.sleep(0.5)
            write(4)
            await until(lambda: len(_lines(server)) == 12, 10, "lines after truncation")
            log.unlink()
            await until(lambda: server.log_state == "missing", 10, "deleted")
            write(2, log, "w")
            await until(lambda: len(_lines(server)) == 14, 10, "lines of the recreated file")
            assert _lines(server) == written
            assert any("rotated" in line for line in server.log_lines)

    asyncio.run(run())


def _lines(server) -> list[str]:
    return [line for line in server.log_lines if not line.startswith("--- sglconsole")]


def test_ssh_drops_between_kill_and_launch(two_hosts, tmp_path):
    cfg = config.load(two_hosts.config_path)
    host = two_hosts.hosts["ct129"]
    audit = AuditLog(tmp_path / "state" / "sglconsole" / "actions.jsonl")

    def progress(stage):
        if stage.name == "verify" and stage.state == StageState.OK:
            _kill_sessions(host)  # the connection dies right after the old server is gone

    async def run():
        fleet = SshFleet(cfg.hosts)
        try:
            with pytest.raises(Exception, match="connection|closed|lost|Connection"):
                await restore(ActionContext(cfg, fleet, progress=progress), "ct129", 30000)
        finally:
            await fleet.close()

    asyncio.run(run())
    (record,) = audit.actions()
    assert record["action"] == "restore" and record["phase"] == "end" and record["ok"] is False
    assert "rollback" in record["outcome"]
    back = subprocess.run(
        [
            sys.executable,
            "-m",
            "sglconsole",
            "rollback",
            "-c",
            str(two_hosts.config_path),
            "ct129:30000",
            "--yes",
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert back.returncode == 0, back.stdout + back.stderr


def test_console_killed_during_restore(two_hosts, tmp_path):
    cfg_path = str(two_hosts.config_path)
    console = subprocess.Popen(
        [sys.executable, "-m", "sglconsole", "restore", "-c", cfg_path, "ct129:30000", "--yes"],
        stdout=subprocess.PIPE,
        text=True,
        env={**os.environ, "COLUMNS": "200"},
    )
    for line in console.stdout:
        if line.startswith("OK      launch"):
            console.kill()  # the console dies while the new server starts
            break
    console.wait(10)
    (record,) = AuditLog(tmp_path / "state" / "sglconsole" / "actions.jsonl").actions()
    assert (
        record["phase"] == "begin" and record["outcome"] == "started"
    )  # interrupted: begun, never ended
    status = subprocess.run(
        [sys.executable, "-m", "sglconsole", "status", "-c", cfg_path, "--json"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    server = json.loads(status.stdout)["hosts"]["ct129"]["servers"][0]
    assert (
        server["pid"] is not None and "--speculative-num-steps" in server["argv"]
    )  # the truth: the new server runs
    back = subprocess.run(
        [sys.executable, "-m", "sglconsole", "rollback", "-c", cfg_path, "ct129:30000", "--yes"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert back.returncode == 0, back.stdout + back.stderr
    status = json.loads(
        subprocess.run(
            [sys.executable, "-m", "sglconsole", "status", "-c", cfg_path, "--json"],
            capture_output=True,
            text=True,
            timeout=60,
        ).stdout
    )
    assert (
        "--speculative-algo" in status["hosts"]["ct129"]["servers"][0]["argv"]
    )  # what ran before the restore


def test_two_consoles_on_one_server(two_hosts):
    cfg = config.load(two_hosts.config_path)

    async def run():
        fleet = SshFleet(cfg.hosts)
        try:
            async with host_lock(ActionContext(cfg, fleet), "ct129", 30000, "restore"):
                other = await asyncio.create_subprocess_exec(
                    sys.executable,
                    "-m",
                    "sglconsole",
                    "kill",
                    "-c",
                    str(two_hosts.config_path),
                    "ct129:30000",
                    "--yes",
                    stdout=asyncio.subprocess.PIPE,
                    stderr=asyncio.subprocess.PIPE,
                )
                out, _ = await other.communicate()
                assert other.returncode == 1
                assert "is locked by" in out.decode() and "restore since" in out.decode()
        finally:
            await fleet.close()

    asyncio.run(run())
    after = subprocess.run(
        [
            sys.executable,
            "-m",
            "sglconsole",
            "kill",
            "-c",
            str(two_hosts.config_path),
            "ct129:30000",
            "--yes",
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert after.returncode == 0, after.stdout  # the lock went with the first console's action
