"""What the console costs while nobody touches it: the TUI (with --record) next to the bare monitor
on the same demo fleet, with idle servers and with the demo's load, in one run; and, with idle
servers, `sglconsole -c HOSTS.yaml` itself in a real tmux pane (160x48), drawing to a terminal: on
the whole demo (4 hosts), and on its first 3 (THREE_HOSTS: the demo the ≤ 1% target was set on).

    python bench/idle_cost.py [--seconds 60] [--settle 20] [--smallest] [--out FILE]
    # updates the idle_* and loaded_* keys of bench/results.json
    python bench/idle_cost.py --pane-only /tmp/base . --rounds 3   # before/after, writes nothing
    python bench/idle_cost.py --profile [--wrap MODULE:ATTR ...]   # where the pane's CPU goes

Headless (Textual's test driver) measures the app in this process; the pane measures the console's
own process (utime + stime from /proc/PID/stat), the terminal's drawing included, and the tmux
server's CPU beside it. Without tmux the bench says so and exits 1 (it writes nothing).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from bench import checks, loop_profile  # noqa: E402
from bench.cpu import load, own_cpu_s, proc_stat  # noqa: E402
from sglconsole import config  # noqa: E402
from sglconsole.remote.monitor import FleetMonitor  # noqa: E402
from sglconsole.sim.fleet.scenarios import demo_hosts, demo_profiles  # noqa: E402
from sglconsole.sim.fleet.start import SimFleet  # noqa: E402
from sglconsole.sim.gpustate import pid_alive  # noqa: E402
from sglconsole.tui.app import make_app  # noqa: E402

SETTLE_S = 20.0
WARM_S = 60.0
"""--pane-only: the fleet's servers past their first minute before the first pane, as in the
full run (where the pane comes after the monitor and the headless TUI): every tree in turn sees
the same fleet."""
PANE = ("160", "48")
THREE_HOSTS = ("ct129", "h200x4", "old059")
"""The demo when the idle target was set (3.8% of a core then, ≤ 1% the target): the seed story's
ct130 joined it later. The pane is measured on both."""
SCRIPT = "bench/idle_cost.py"
PROMISES: checks.Promises = {
    # key written -> the count that proves it measured (bench.checks)
    "idle_tui_cpu_pct": "idle_cost.tui.cpu_pct",
    "idle_tui_pane_cpu_pct": "idle_cost.tui_pane.seconds",
    "idle_tui_pane_3_hosts_cpu_pct": "idle_cost.tui_pane_3_hosts.seconds",
    "idle_record_mb_per_hour": None,  # 0 is a figure: nothing changed, nothing recorded
    "idle_cost.monitor.cpu_pct": "idle_cost.monitor.cpu_pct",
    "idle_cost.tui_vs_monitor": "idle_cost.monitor.cpu_pct",
    "loaded_cost.tui.cpu_pct": "loaded_cost.tui.cpu_pct",
    "loaded_cost.tui_vs_monitor": "loaded_cost.monitor.cpu_pct",
}
SMALLEST = {"seconds": 3.0, "settle": 5.0}
HOOKS = ("sglconsole.tui.app:make_app", "sglconsole.remote.monitor:FleetMonitor")


async def tui(cfg: config.Config, seconds: float, record: Path, settle: float) -> dict:
    app = make_app(cfg, record=record)
    async with app.run_test(size=(160, 48)) as pilot:
        await pilot.pause(settle)
        began_cpu, began, size = own_cpu_s(children=False), time.monotonic(), record.stat().st_size
        await pilot.pause(seconds)
        took = time.monotonic() - began
        return {
            "cpu_pct": (own_cpu_s(children=False) - began_cpu) / took * 100,
            "record_mb_per_hour": (record.stat().st_size - size) / took * 3600 / 1e6,
        }


async def monitor(cfg: config.Config, seconds: float, settle: float) -> dict:
    async with FleetMonitor(cfg):
        await asyncio.sleep(settle)
        began_cpu, began = own_cpu_s(children=False), time.monotonic()
        await asyncio.sleep(seconds)
        took = time.monotonic() - began
        return {"cpu_pct": (own_cpu_s(children=False) - began_cpu) / took * 100}


class PaneGone(RuntimeError):
    pass


def pane(
    tmux: str,
    hosts_yaml: Path,
    seconds: float,
    code: Path = REPO,
    settle: float = SETTLE_S,
    program: list[str] | None = None,
) -> dict:
    """`sglconsole -c HOSTS_YAML` (as an operator starts it: no --record) in a tmux session of its
    own (private server socket), running the sglconsole of the tree CODE: its CPU (utime + stime
    of its own process, from /proc) and the tmux server's over SECONDS after SETTLE_S. PROGRAM:
    what runs instead of the `sglconsole` command (given `-c HOSTS_YAML` as well)."""
    server = f"sglconsole-idle-{os.getpid()}"
    console = [str(Path(sys.executable).parent / "sglconsole")] if program is None else program
    code = code.resolve()
    env = {"PYTHONPATH": str(code)}  # that tree's code, whatever the venv's editable install is
    env.update({key: os.environ[key] for key in ("XDG_STATE_HOME",) if key in os.environ})
    _check_code(code, env)
    command = " ".join(["exec", *map(shlex.quote, [*console, "-c", str(hosts_yaml)])])
    base = [tmux, "-L", server, "-f", "/dev/null"]
    size = ["-x", PANE[0], "-y", PANE[1]]
    pid = None
    try:
        variables = [f"-e{key}={value}" for key, value in env.items()]
        started = _tmux(
            base, "new-session", "-d", *size, "-P", "-F", "#{pane_pid}", *variables, command
        )
        pid, tmux_pid = int(started), int(_tmux(base, "display-message", "-p", "#{pid}"))
        time.sleep(settle)
        began, began_cpu, began_tmux = time.monotonic(), _own_cpu(pid), _own_cpu(tmux_pid)
        time.sleep(seconds)
        took = time.monotonic() - began
        cpu, tmux_cpu = _own_cpu(pid), _own_cpu(tmux_pid)
        return {
            "cpu_pct": (cpu - began_cpu) / took * 100,
            "tmux_server_cpu_pct": (tmux_cpu - began_tmux) / took * 100,
            "size": "x".join(PANE),
            "seconds": round(took, 1),
        }
    finally:
        subprocess.run([*base, "kill-server"], capture_output=True)
        if pid is not None:
            _end(pid)


def _end(pid: int, wait_s: float = 10.0) -> None:
    """The pane's console ends with its pane (SIGHUP); if it has not after WAIT_S, SIGTERM."""
    deadline = time.monotonic() + wait_s
    while time.monotonic() < deadline:
        if not pid_alive(pid):
            return
        time.sleep(0.2)
    print(f"the console (pid {pid}) outlived its pane: SIGTERM", file=sys.stderr)
    try:
        os.kill(pid, signal.SIGTERM)
    except ProcessLookupError:
        pass


def _check_code(code: Path, env: dict) -> None:
    """The pane must run CODE's sglconsole, not the one the venv was installed from."""
    where = subprocess.run(
        [sys.executable, "-c", "import sglconsole; print(sglconsole.__file__)"],
        env={**os.environ, **env},
        cwd="/",
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    if not Path(where).resolve().is_relative_to(code.resolve()):
        raise SystemExit(f"PYTHONPATH={code} imports sglconsole from {where}, not from that tree")


def _own_cpu(pid: int) -> float:
    """utime + stime of PID (its reaped children not counted), or PaneGone."""
    stat = proc_stat(pid, children=False)
    if stat is None:
        raise PaneGone(f"process {pid} ended before it was measured")
    return stat[1]


def _tmux(base: list[str], *args: str) -> str:
    return subprocess.run([*base, *args], check=True, capture_output=True, text=True).stdout.strip()


def hosts_only(hosts_yaml: Path, names: tuple[str, ...]) -> Path:
    """A copy of HOSTS_YAML beside it with only these hosts (the rest as it is)."""
    document = yaml.safe_load(hosts_yaml.read_text())
    missing = [name for name in names if name not in document["hosts"]]
    if missing:
        checks.fail(SCRIPT, "idle_tui_pane_3_hosts_cpu_pct", f"the demo has no host {missing}")
    document["hosts"] = {name: document["hosts"][name] for name in names}
    path = hosts_yaml.with_name(f"hosts-{len(names)}.yaml")
    path.write_text(yaml.safe_dump(document, sort_keys=False, width=100))
    return path


def idle_fleet(workdir: Path) -> SimFleet:
    hosts = demo_hosts(startup_s=1.0)
    for host in hosts:
        host.sglang["load"] = {"concurrency": 0, "max_tokens": 1}
    return SimFleet(workdir, hosts, demo_profiles(), ssh="auto")


def compare(tmux: str, trees: list[Path], seconds: float, rounds: int) -> list[dict]:
    """The pane alone, for each tree in turn, ROUNDS times, on one idle demo fleet: before and
    after side by side, with the load average at each. Printed; nothing is written."""
    fleet = idle_fleet(Path(tempfile.mkdtemp(prefix="sglconsole-idle-")))
    found = []
    try:
        fleet.start()
        time.sleep(WARM_S)
        for round_number in range(rounds):
            for tree in trees:
                taken = pane(tmux, fleet.config_path, seconds, tree)
                taken.update(tree=str(tree), round=round_number, machine=load())
                print(json.dumps(taken), flush=True)
                found.append(taken)
    finally:
        fleet.stop()
    return found


def profile(tmux: str, seconds: float, settle: float, wrap: list[str]) -> str:
    """The pane on an idle demo fleet, its event loop's callbacks timed (bench.loop_profile):
    where its CPU goes, as a table. Printed; nothing is written to results.json."""
    for spec in wrap:  # in this process first: a name that is not there, said before any fleet
        try:
            loop_profile.resolve(spec)
        except ValueError as exc:
            checks.fail(SCRIPT, "profile", f"--wrap {exc}")
    workdir = Path(tempfile.mkdtemp(prefix="sglconsole-idle-"))
    fleet = idle_fleet(workdir)
    out = workdir / "loop_profile.json"
    program = [sys.executable, "-m", "bench.loop_profile", str(out), str(settle)]
    program += ["--wrap", *wrap, "--"] if wrap else ["--"]
    try:
        fleet.start()
        # a write at least: the profile writes every WRITE_EVERY_S
        taken = pane(
            tmux, fleet.config_path, seconds + loop_profile.WRITE_EVERY_S, REPO, settle, program
        )
    finally:
        fleet.stop()
    if not out.exists():
        checks.fail(SCRIPT, "profile", f"the profiled console wrote no {out.name}")
    return (
        f"the pane: {taken['cpu_pct']:.2f}% of a core, profiling included\n"
        + loop_profile.report(out)
    )


def measure(idle: bool, seconds: float, settle: float, tmux: str | None = None) -> dict:
    workdir = Path(tempfile.mkdtemp(prefix="sglconsole-idle-"))
    if idle:
        fleet = idle_fleet(workdir)
    else:
        fleet = SimFleet(workdir, demo_hosts(startup_s=1.0), demo_profiles(), ssh="auto")
    try:
        cfg = config.load(fleet.start())
        bare = asyncio.run(monitor(cfg, seconds, settle))
        with_ui = asyncio.run(tui(cfg, seconds, workdir / "record.jsonl", settle))
        panes = {}
        if tmux:
            panes["tui_pane"] = pane(tmux, fleet.config_path, seconds, settle=settle)
            three = hosts_only(fleet.config_path, THREE_HOSTS)
            panes["tui_pane_3_hosts"] = pane(tmux, three, seconds, settle=settle)
    finally:
        fleet.stop()
    return {
        "monitor": bare,
        "tui": with_ui,
        "tui_vs_monitor": checks.ratio(with_ui["cpu_pct"], bare["cpu_pct"]),
        **panes,
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=60)
    parser.add_argument("--settle", type=float, default=SETTLE_S, help="seconds not counted")
    parser.add_argument("--out", type=Path, default=REPO / "bench" / "results.json")
    parser.add_argument(
        "--pane-only",
        type=Path,
        nargs="+",
        metavar="TREE",
        help="only the real pane, for each of these source trees in turn (before/after); "
        "prints, writes nothing",
    )
    parser.add_argument("--rounds", type=int, default=1, help="with --pane-only")
    parser.add_argument(
        "--profile",
        action="store_true",
        help="only the real pane, its event loop's callbacks timed (bench/loop_profile.py): "
        "prints where its CPU goes, writes nothing",
    )
    parser.add_argument(
        "--wrap",
        nargs="+",
        default=[],
        metavar="MODULE:ATTR",
        help="with --profile: functions timed too "
        "(e.g. sglconsole.tui.screens.main:MainScreen.redraw)",
    )
    args = checks.parse(parser, SMALLEST)
    checks.require_hooks(SCRIPT, HOOKS)
    tmux = shutil.which("tmux")
    if tmux is None:
        checks.fail(SCRIPT, "idle_tui_pane_cpu_pct", "tmux is not installed (apt-get install tmux)")
    os.environ.setdefault("XDG_STATE_HOME", tempfile.mkdtemp(prefix="sglconsole-state-"))
    if args.pane_only:
        compare(tmux, args.pane_only, args.seconds, args.rounds)
        return 0
    if args.profile:
        print(profile(tmux, args.seconds, args.settle, args.wrap), flush=True)
        return 0
    measured = {}
    for name, idle in (("idle", True), ("loaded", False)):
        found = measure(idle, args.seconds, args.settle, tmux if idle else None)
        measured[f"{name}_cost"] = found
        print(f"{name}: {json.dumps(found)}", flush=True)
    measured["idle_tui_cpu_pct"] = measured["idle_cost"]["tui"]["cpu_pct"]
    measured["idle_tui_pane_cpu_pct"] = measured["idle_cost"]["tui_pane"]["cpu_pct"]
    measured["idle_tui_pane_3_hosts_cpu_pct"] = measured["idle_cost"]["tui_pane_3_hosts"]["cpu_pct"]
    measured["idle_record_mb_per_hour"] = measured["idle_cost"]["tui"]["record_mb_per_hour"]
    checks.save(SCRIPT, args.out, measured, PROMISES)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
