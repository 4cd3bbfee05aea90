"""A machine where nothing was set up by hand: sshd's run-time directory is missing, sshd may not
start at all, and whoever runs a simulated fleet may be stopped by any signal. Each case must say
why it failed, quickly, and leave no process behind."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from sglconsole.sim.fleet.engines import DOCKER, unavailable
from sglconsole.sim.fleet.scenarios import demo_profiles
from sglconsole.sim.fleet.start import HostSpec, SimFleet
from tests.processes import host_namespaces, in_namespaces, now_ticks, processes_mentioning

REPO = Path(__file__).resolve().parents[2]
needs_root_sshd = pytest.mark.skipif(
    os.geteuid() != 0 or not shutil.which("sshd"), reason="OpenSSH's sshd as root (what CI has)"
)


def wait_gone(text: str, timeout: float = 10.0) -> list[str]:
    deadline = time.monotonic() + timeout
    while (left := processes_mentioning(text)) and time.monotonic() < deadline:
        time.sleep(0.1)
    return left


def wait_namespaces(workdir: str, count: int, timeout: float = 10.0) -> set[str]:
    """The hosts' PID namespaces under workdir, once all COUNT of them are seen (a loaded
    machine may show a host's init a moment after its fleet said it was ready)."""
    deadline = time.monotonic() + timeout
    while len(found := host_namespaces(workdir)) < count and time.monotonic() < deadline:
        time.sleep(0.1)
    return found


def wait_empty(namespaces: set[str], started_by: float, timeout: float = 10.0) -> list[str]:
    """The processes still in those PID namespaces once the kernel has had time to end them, of
    those started by STARTED_BY (now_ticks() when the fleet was told to stop): a freed
    namespace's number may name another test's new host."""
    deadline = time.monotonic() + timeout
    while (left := in_namespaces(namespaces, started_by)) and time.monotonic() < deadline:
        time.sleep(0.1)
    return [
        f"{pid}: {Path(f'/proc/{pid}/status').read_text().splitlines()[:3]}"
        for pid in left
        if Path(f"/proc/{pid}").exists()
    ]


SERVE_ONE_COMMAND = textwrap.dedent("""
    import asyncio, os, sys
    import asyncssh
    from sglconsole.sim.fleet.start import HostSpec, SimFleet
    from sglconsole.sim.fleet.scenarios import demo_profiles

    assert not os.path.exists("/run/sshd"), "the test's /run should not have sshd's directory"
    fleet = SimFleet(sys.argv[1], [HostSpec("fresh")], demo_profiles(), ssh="sshd")
    fleet.start(timeout=20)
    try:
        host = fleet.hosts["fresh"]
        keys = fleet.workdir / "keys"

        async def run():
            async with asyncssh.connect(host.address, host.port, username="root",
                                        client_keys=[str(keys / "id_ed25519")],
                                        known_hosts=str(keys / "known_hosts")) as conn:
                return (await conn.run("echo served-over-sshd", check=True)).stdout

        print(asyncio.run(run()).strip())
        print("privsep", oct(os.stat("/run/sshd").st_mode & 0o777))
    finally:
        fleet.stop()
""")


@needs_root_sshd
def test_host_serves_ssh_where_run_has_no_sshd_directory(tmp_path):
    """As on a machine with no init system: /run is empty (a tmpfs in a private mount namespace)."""
    script = tmp_path / "serve_one.py"
    script.write_text(SERVE_ONE_COMMAND)
    inner = f"mount -t tmpfs fresh-run /run && exec {sys.executable} {script} {tmp_path / 'fleet'}"
    done = subprocess.run(
        ["unshare", "--mount", "--propagation", "private", "--", "sh", "-c", inner],
        capture_output=True,
        text=True,
        timeout=90,
        cwd=REPO,
        env={**os.environ, "PYTHONPATH": str(REPO)},
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.split("\n")[:2] == ["served-over-sshd", "privsep 0o755"]


@needs_root_sshd
def test_sshd_that_cannot_start_fails_fast_with_its_own_words_and_leaves_nothing(tmp_path):
    workdir = tmp_path / "fleet"
    broken = HostSpec("broken", sshd_config_extra="NoSuchOption yes\n")
    fleet = SimFleet(
        workdir, [HostSpec("fine"), HostSpec("fine2"), broken], demo_profiles(), ssh="sshd"
    )
    started = time.monotonic()
    with pytest.raises(RuntimeError) as raised:
        fleet.start(timeout=60)
    elapsed = time.monotonic() - started
    assert elapsed < 5, f"took {elapsed:.1f}s to report a host whose sshd cannot start"
    message = str(raised.value)
    assert "broken could not start SSH" in message
    assert "Bad configuration option: NoSuchOption" in message  # sshd's own text, from hostd.log
    assert all(
        host.process.poll() is not None for host in fleet.hosts.values()
    )  # the good hosts too
    assert wait_gone(str(workdir)) == []


def start_and_wait(
    command: list[str], ready: str, cwd: Path, env: dict | None = None, timeout: float = 120
) -> subprocess.Popen:
    proc = subprocess.Popen(
        command,
        cwd=cwd,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env={**os.environ, **(env or {})},
    )
    deadline = time.monotonic() + timeout
    seen = []
    while time.monotonic() < deadline:
        line = proc.stdout.readline()
        if not line and proc.poll() is not None:
            break
        seen.append(line)
        if ready in line:
            return proc
    proc.kill()
    raise AssertionError(f"never printed {ready!r}:\n{''.join(seen)[-3000:]}")


def test_bench_stopped_by_sigterm_stops_its_fleet(tmp_path):
    """`timeout 60 python bench/run.py` must not leave 16 simulated hosts running."""
    command = [
        sys.executable,
        "bench/run.py",
        "--hosts",
        "2",
        "--servers",
        "1",
        "--seconds",
        "30",
        "--rss-minutes",
        "0",
        "--skip-parser",  # else, without the real-SGLang venv, it stops before the fleet starts
        "--out",
        str(tmp_path / "results.json"),
    ]
    bench = start_and_wait(command, "phase naive", REPO, env={"TMPDIR": str(tmp_path)})
    namespaces = wait_namespaces(str(tmp_path), 2)
    assert len(namespaces) == 2 and in_namespaces(namespaces), processes_mentioning("sim.host")
    signalled = now_ticks()
    bench.send_signal(signal.SIGTERM)
    assert bench.wait(30) == 128 + signal.SIGTERM
    assert wait_gone(str(tmp_path)) == []
    assert wait_empty(namespaces, signalled) == []
    assert not (tmp_path / "results.json").exists()


@pytest.mark.parametrize("sig", [signal.SIGHUP, signal.SIGKILL], ids=["SIGHUP", "SIGKILL"])
def test_demo_killed_or_hung_up_leaves_no_host(tmp_path, sig):
    """A closed tmux pane (SIGHUP) cleans up like Ctrl-C; even SIGKILL takes the hosts with it."""
    workdir = tmp_path / "demo"
    demo = start_and_wait(
        [sys.executable, "-m", "sglconsole", "demo", "--no-ui", "--dir", str(workdir)],
        "hosts.yaml",
        REPO,
        timeout=60,
    )
    namespaces = host_namespaces(str(workdir))
    # one per demo host (five where Docker can run: gpu-docker, its dockerd in its namespaces)
    assert len(namespaces) == 4 + (unavailable(DOCKER) is None)
    signalled = now_ticks()
    demo.send_signal(sig)
    demo.wait(30)
    assert wait_gone(str(workdir)) == []
    assert wait_empty(namespaces, signalled) == []
