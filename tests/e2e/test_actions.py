"""Actions end to end over real SSH on simulated hosts: restore, kill, preflight, rollback,
probe."""

from __future__ import annotations

import asyncio
import json
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml

from sglconsole import config
from sglconsole.actions import ActionContext, StageFailed
from sglconsole.actions.audit import AuditLog
from sglconsole.actions.kill import signal_tree
from sglconsole.remote.inspect import snapshot
from sglconsole.remote.ssh.connection import SshFleet
from sglconsole.sim.fleet.scenarios import DRIFTED_27B
from sglconsole.sim.fleet.start import HostSpec, ServerSpec
from tests.cli import cli

HOSTILE = [
    "two words",
    "it's",
    'say "hi"',
    "a; touch /tmp/sglc-pwned-1",
    "$(touch /tmp/sglc-pwned-2)",
    "`touch /tmp/sglc-pwned-3`",
    "line\nbreak",
    "*",
    "$HOME",
    "back\\slash",
]


def ct129(**sglang) -> HostSpec:
    settings = {"startup_s": 0.5, "load": {"concurrency": 1, "max_tokens": 400}, **sglang}
    return HostSpec(
        name="ct129",
        gpu_model="A6000",
        gpu_count=2,
        models=("Qwen3.6-27B",),
        sglang=settings,
        servers=[ServerSpec(30000, "qwen27b-tp2-mtp", [0, 1], running=DRIFTED_27B)],
    )


@pytest.fixture
def state_dir(tmp_path, monkeypatch) -> Path:
    folder = tmp_path / "state"
    monkeypatch.setenv("XDG_STATE_HOME", str(folder))
    return folder


def with_profiles(path: Path, extra: dict, server_profile: str | None = None) -> Path:
    data = yaml.safe_load(path.read_text())
    base = data["profiles"]["qwen27b-tp2-mtp"]
    for name, changes in extra.items():
        data["profiles"][name] = {**base, **changes}
    if server_profile:
        data["hosts"]["ct129"]["servers"][0]["profile"] = server_profile
    out = path.with_name("hosts-test.yaml")
    out.write_text(yaml.safe_dump(data, sort_keys=False))
    return out


async def host_run(cfg_path: Path, argv: list[str]) -> str:
    cfg = config.load(cfg_path)
    fleet = SshFleet(cfg.hosts)
    try:
        return (await fleet["ct129"].run(argv)).stdout
    finally:
        await fleet.close()


def cmdline_of_port(cfg_path: Path, port: int = 30000) -> tuple[int, list[str]] | None:
    async def look():
        cfg = config.load(cfg_path)
        fleet = SshFleet(cfg.hosts)
        try:
            snap = await snapshot(fleet["ct129"], cfg.hosts["ct129"].python)
            server = snap.server(port)
            return None if server is None else (server.main.pid, list(server.main.argv))
        finally:
            await fleet.close()

    return asyncio.run(look())


def wait_status(path: str, want: str, timeout: float = 40, reason: str = "") -> dict:
    """ct129's first server once its status is WANT (and its reason says REASON)."""
    deadline = time.monotonic() + timeout
    while True:
        server = json.loads(cli("status", "-c", path, "--json").stdout)["hosts"]["ct129"][
            "servers"
        ][0]
        if server["status"] == want and reason in server["reason"]:
            return server
        if time.monotonic() > deadline:
            return server
        time.sleep(1)


def test_restore_turns_the_drifted_server_into_the_proven_one(fleet_factory, state_dir):
    fleet = fleet_factory([ct129()])
    path = str(fleet.config_path)
    assert cli("diff", "-c", path, "ct129:30000").returncode == 1  # drifted
    assert wait_status(path, "SLOW")["status"] == "SLOW"
    result = cli("restore", "-c", path, "ct129:30000", "--yes", "--json")
    assert result.returncode == 0, result.stdout + result.stderr
    data = json.loads(result.stdout)
    assert data["ok"] and data["after_tok_s"] > data["before_tok_s"], data
    # one source per clause: the probe's per-request speed, its ratio to before, its share of the
    # baseline; the live aggregate apart
    probe = data["probe"]
    judged, live = data["summary"].split(": ", 1)[1].split("; live: ")
    ratio = probe["throughput_tok_s"] / data["before_tok_s"]
    share = probe["throughput_tok_s"] / probe["expected_tok_s"]
    assert judged.startswith(
        f"the probe: {probe['throughput_tok_s']:.1f} tok/s per request, {ratio:.2f}x the"
        f" {data['before_tok_s']:.1f} per request before,"
    ), data["summary"]
    assert f"({share:.0%} of its {probe['expected_tok_s']:.1f} per request)" in judged, judged
    assert f"{data['after_tok_s']:.1f}" not in judged and "in all" not in judged, judged
    assert live.startswith(f"{data['after_aggregate_tok_s']:.1f} tok/s in all at "), live
    # like with like: the same background load (1 request) before and after, as status shows it
    deadline = time.monotonic() + 30
    while not (now := wait_status(path, "UP")).get("tok_s") or now["pid"] != data["pid"]:
        assert time.monotonic() < deadline, now
        time.sleep(1)
    assert now["tok_s"] >= 1.7 * data["before_tok_s"], (now, data)
    assert [s["name"] for s in data["stages"]][:4] == ["measure", "inspect", "preflight", "save"]
    assert data["probe"]["verdict"] == "OK"
    assert cli("diff", "-c", path, "ct129:30000").returncode == 0  # runs the profile's argv now
    actions = AuditLog(state_dir / "sglconsole" / "actions.jsonl").actions()
    assert [(a["action"], a["phase"], a["ok"]) for a in actions] == [("restore", "end", True)]
    assert oct((state_dir / "sglconsole" / "actions.jsonl").stat().st_mode & 0o777) == "0o600"


def test_kill_leaves_no_process_and_frees_the_gpus(fleet_factory, state_dir):
    fleet = fleet_factory([ct129(zombie_child=True)])
    path = fleet.config_path
    assert "sglang" in asyncio.run(host_run(path, ["ps", "-eo", "stat,args"]))
    result = cli("kill", "-c", str(path), "ct129:30000", "--yes")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "port 30000 free" in result.stdout
    ps = asyncio.run(host_run(path, ["ps", "-eo", "stat,args"]))
    assert "sglang" not in ps, ps  # the server, its children and its zombie child are gone
    apps = asyncio.run(
        host_run(path, ["nvidia-smi", "--query-compute-apps=pid", "--format=csv,noheader"])
    )
    assert apps.strip() == ""
    memory = asyncio.run(
        host_run(path, ["nvidia-smi", "--query-gpu=memory.used", "--format=csv,noheader,nounits"])
    )
    assert all(int(v) < 100 for v in memory.split()), memory
    saved = json.loads((state_dir / "sglconsole" / "rollback" / "ct129_30000.json").read_text())[-1]
    assert (
        saved["argv"][1:3] == ["-m", "sglang.launch_server"]
        and saved["env"]["CUDA_VISIBLE_DEVICES"] == "0,1"
    )


def test_after_our_kill_status_says_who_stopped_it_and_when_not_a_crash(fleet_factory, state_dir):
    """DOWN after a kill used to read like a crash: 'its log's last error ...: CancelledError'
    (the kill's own SIGTERM traceback)."""
    fleet = fleet_factory([ct129()])
    path = str(fleet.config_path)
    assert wait_status(path, "SLOW")["status"] == "SLOW"
    result = cli("kill", "-c", path, "ct129:30000", "--yes")
    assert result.returncode == 0, result.stdout + result.stderr
    down = wait_status(path, "DOWN", reason="stopped by")
    assert down["status"] == "DOWN", down
    record = AuditLog(state_dir / "sglconsole" / "actions.jsonl").actions()[-1]
    assert record["action"] == "kill" and record["ok"], record
    when = record["end_time"][11:19]
    assert down["reason"] == f"stopped by {record['user']} (kill) at {when}", down
    text = cli("status", "-c", path)
    assert "stopped by" in text.stdout and "CancelledError" not in text.stdout, text.stdout


def test_kill_sweeps_orphans_a_crash_left_holding_gpus(fleet_factory, state_dir):
    fleet = fleet_factory([ct129(linger_children=True)])
    path = fleet.config_path
    assert wait_status(str(path), "SLOW")["status"] == "SLOW"  # up, with its memory allocated
    pid, _ = cmdline_of_port(path)
    asyncio.run(
        host_run(path, ["kill", "-9", str(pid)])
    )  # the main process dies alone; its children linger
    time.sleep(1.5)
    assert "sglang::scheduler_TP0" in asyncio.run(host_run(path, ["ps", "-eo", "args"]))
    result = cli("kill", "-c", str(path), "ct129:30000", "--yes")
    assert result.returncode == 0 and "swept" in result.stdout, result.stdout + result.stderr
    assert "sglang::" not in asyncio.run(host_run(path, ["ps", "-eo", "args"]))


def test_kill_stops_a_jit_build_that_runs_in_a_session_of_its_own(fleet_factory, state_dir):
    """flashinfer's JIT build (ninja, nvcc) outlives its scheduler unless the kill follows it:
    each compile sits in a process group of its own, and ninja leaves them when it dies."""
    fleet = fleet_factory([ct129(jit_build=True)])
    path = fleet.config_path
    assert wait_status(str(path), "SLOW")["status"] == "SLOW"
    deadline = time.monotonic() + 20
    while "nvcc -c" not in asyncio.run(host_run(path, ["ps", "-eo", "args"])):
        assert time.monotonic() < deadline, "the simulated JIT build did not start"
        time.sleep(0.5)
    result = cli("kill", "-c", str(path), "ct129:30000", "--yes")
    assert result.returncode == 0, result.stdout + result.stderr
    time.sleep(1.0)
    left = asyncio.run(host_run(path, ["ps", "-eo", "pid,pgid,sid,args"]))
    assert "nvcc -c" not in left and "ninja -v" not in left, left


def test_kill_reports_a_build_its_crashed_scheduler_orphaned(fleet_factory, state_dir):
    """The scheduler that started a JIT build died first: the build hangs off PID 1 in a session
    of its own. Nothing proves it is the server's, so it is shown, not signalled."""
    fleet = fleet_factory([ct129(jit_build=True)])
    path = fleet.config_path
    assert wait_status(str(path), "SLOW")["status"] == "SLOW"
    deadline = time.monotonic() + 20
    while "nvcc -c" not in asyncio.run(host_run(path, ["ps", "-eo", "args"])):
        assert time.monotonic() < deadline, "the simulated JIT build did not start"
        time.sleep(0.5)
    table = asyncio.run(host_run(path, ["ps", "-eo", "pid,args"]))
    scheduler = next(line.split()[0] for line in table.splitlines() if "scheduler_TP0" in line)
    asyncio.run(host_run(path, ["kill", "-9", scheduler]))  # the crash
    time.sleep(1.0)
    result = cli("kill", "-c", str(path), "ct129:30000", "--yes")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "left running, check: pid" in result.stdout and "ninja -v" in result.stdout
    assert "ninja -v" in asyncio.run(host_run(path, ["ps", "-eo", "args"]))  # never by name


def test_preflight_refuses_a_flag_the_host_does_not_know(fleet_factory, state_dir):
    fleet = fleet_factory([ct129()])
    old = cmdline_of_port(fleet.config_path)
    bad_args = [*DRIFTED_27B, "--mamba-scheduler-strategy", "extra_buffer"]
    path = with_profiles(
        fleet.config_path,
        {"old-flags": {"args": [a.replace("{models}", "/srv/models") for a in bad_args]}},
    )
    result = cli("relaunch", "-c", str(path), "ct129:30000", "--profile", "old-flags", "--yes")
    assert result.returncode == 1
    said = " ".join(result.stdout.split())
    assert "unrecognized arguments: --mamba-scheduler-strategy extra_buffer" in said
    # when it went and what SGLang itself names instead, read from the shipped flag tables
    # every release has its table: the release is exact
    assert "`--mamba-scheduler-strategy` was removed in SGLang 0.5.20 (last in 0.5.19)" in said
    assert "SGLang's replacement: `--mamba-radix-cache-strategy` (its deprecation action" in said
    assert "nothing was touched" in result.stdout
    assert cmdline_of_port(fleet.config_path) == old  # the old server runs untouched


def test_preflight_says_a_0_5_12_flag_is_now_an_ambiguous_prefix_and_names_its_successor(
    fleet_factory, state_dir
):
    """`--cuda-graph-max-bs` was a whole flag in 0.5.12; the 0.5.23 host's argparse reads it as an
    abbreviation of two per-phase flags and refuses: say so, the release, SGLang's replacement."""
    fleet = fleet_factory([ct129()])
    old = cmdline_of_port(fleet.config_path)
    args = [a.replace("{models}", "/srv/models") for a in DRIFTED_27B]
    path = with_profiles(
        fleet.config_path, {"v0512": {"args": [*args, "--cuda-graph-max-bs", "16"]}}
    )
    result = cli("relaunch", "-c", str(path), "ct129:30000", "--profile", "v0512", "--yes")
    assert result.returncode == 1
    said = " ".join(result.stdout.split())
    assert "ambiguous option: --cuda-graph-max-bs could match" in said
    assert "`--cuda-graph-max-bs` was removed in SGLang 0.5." in said
    assert "SGLang's replacement: `--cuda-graph-max-bs-decode`" in said
    assert "on 0.5.23 it only abbreviates --cuda-graph-max-bs-decode" in said
    assert cmdline_of_port(fleet.config_path) == old


def test_an_oom_at_start_is_reported_and_rollback_brings_back_the_old_server(
    fleet_factory, state_dir
):
    fleet = fleet_factory([ct129(reserved_gib=4)])
    old = cmdline_of_port(fleet.config_path)
    path = with_profiles(
        fleet.config_path,
        {"greedy": {"args": [*fleet_profile_args(fleet), "--mem-fraction-static", "0.97"]}},
    )
    result = cli("relaunch", "-c", str(path), "ct129:30000", "--profile", "greedy", "--yes")
    assert result.returncode == 1, result.stdout
    assert "torch.OutOfMemoryError: CUDA out of memory" in result.stdout
    assert "sglconsole rollback ct129:30000" in result.stdout
    # the status says why, from the log, without opening it (once the traceback's last line is in)
    down = wait_status(str(path), "DOWN", reason="CUDA out of memory")
    assert down["status"] == "DOWN" and "CUDA out of memory" in down["reason"], down
    back = cli("rollback", "-c", str(path), "ct129:30000", "--yes")
    assert back.returncode == 0, back.stdout + back.stderr
    now = cmdline_of_port(fleet.config_path)
    assert now is not None and now[1] == old[1] and now[0] != old[0]  # the same argv, a new process


def fleet_profile_args(fleet) -> list[str]:
    data = yaml.safe_load(fleet.config_path.read_text())
    return [
        a
        for a in data["profiles"]["qwen27b-tp2-mtp"]["args"]
        if a not in ("--mem-fraction-static", "0.88")
    ]


def test_a_launched_server_outlives_the_connection_that_started_it(fleet_factory, state_dir):
    fleet = fleet_factory([ct129()])
    result = cli("relaunch", "-c", str(fleet.config_path), "ct129:30000", "--yes")
    assert result.returncode == 0, result.stdout + result.stderr
    pid, argv = cmdline_of_port(fleet.config_path)  # a new connection, after the CLI's closed
    time.sleep(1.0)
    stat = asyncio.run(host_run(fleet.config_path, ["cat", f"/proc/{pid}/stat"]))
    fields = stat.rpartition(")")[2].split()
    assert fields[0] in "SR" and int(fields[3]) == pid  # alive, and leads its own session
    assert (
        "--speculative-num-steps" in argv and argv[argv.index("--speculative-num-steps") + 1] == "3"
    )


def test_pid_reuse_is_refused(fleet_factory, state_dir):
    fleet = fleet_factory([ct129()])

    async def swap_and_kill():
        cfg = config.load(fleet.config_path)
        ssh = SshFleet(cfg.hosts)
        try:
            host = ssh["ct129"]
            snap = await snapshot(host, cfg.hosts["ct129"].python)
            seen = snap.server(30000)
            pid = seen.main.pid
            await host.run(["kill", "-9", f"-{pid}"])  # the server's process group is gone...
            await asyncio.sleep(0.5)
            # ...and an unrelated process gets the very same PID (this host's PID namespace lets
            # us ask)
            script = (
                f"echo {pid - 1} > /proc/sys/kernel/ns_last_pid; setsid sleep 300 >/dev/null 2>&1 &"
            )
            await host.run(["sh", "-c", script])
            await asyncio.sleep(0.3)
            impostor = (await host.run(["cat", f"/proc/{pid}/cmdline"])).stdout.split("\0")
            assert impostor[:2] == ["sleep", "300"], impostor
            with pytest.raises(StageFailed, match="PID reused"):
                await signal_tree(ActionContext(cfg, ssh), host, seen, cfg.hosts["ct129"].python)
            alive = (await host.run(["cat", f"/proc/{pid}/cmdline"])).stdout.split("\0")
            assert alive[:2] == ["sleep", "300"]  # untouched
        finally:
            await ssh.close()

    asyncio.run(swap_and_kill())


def test_hostile_profile_values_arrive_byte_exact(fleet_factory, state_dir):
    fleet = fleet_factory([ct129()])
    args = [*fleet_profile_args(fleet), "--served-model-name", HOSTILE[0]]
    for value in HOSTILE[1:]:
        args += [
            "--chat-template",
            value,
        ]  # argparse keeps the last one; every value still crosses SSH
    env = {
        "SGLANG_ENABLE_SPEC_V2": "1",
        "SGLCONSOLE_HOSTILE": "; $(touch /tmp/sglc-pwned-4) 'x' \"y\" `id`",
    }
    path = with_profiles(
        fleet.config_path, {"hostile": {"args": args, "env": env}}, server_profile="hostile"
    )
    result = cli("relaunch", "-c", str(path), "ct129:30000", "--yes")
    assert result.returncode == 0, result.stdout + result.stderr
    pid, argv = cmdline_of_port(fleet.config_path)
    assert argv[3:] == (args if "--port" in args else [*args, "--port", "30000"])
    environ = asyncio.run(host_run(fleet.config_path, ["cat", f"/proc/{pid}/environ"])).split("\0")
    assert f"SGLCONSOLE_HOSTILE={env['SGLCONSOLE_HOSTILE']}" in environ
    leftovers = asyncio.run(
        host_run(fleet.config_path, ["sh", "-c", "ls /tmp/sglc-pwned-* 2>/dev/null; true"])
    )
    assert leftovers.strip() == ""
    assert not list(Path("/tmp").glob("sglc-pwned-*"))


def test_dry_run_prints_the_commands_and_changes_nothing(fleet_factory, state_dir):
    fleet = fleet_factory([ct129()])
    before = cmdline_of_port(fleet.config_path)
    result = cli("restore", "-c", str(fleet.config_path), "ct129:30000", "--dry-run")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "dry run: these remote commands would run" in result.stdout
    assert "<Stop one SGLang server on this host" in result.stdout  # named, not printed
    assert "def main():" not in result.stdout and len(result.stdout.splitlines()) < 60
    verbose = cli("restore", "-c", str(fleet.config_path), "ct129:30000", "--dry-run", "-v")
    assert "def main():" in verbose.stdout  # -v: the helpers' source, as it would be sent
    assert cmdline_of_port(fleet.config_path) == before
    assert not (state_dir / "sglconsole" / "actions.jsonl").exists()


def test_probe_verdicts_on_the_demo_fleet(demo_fleet, state_dir):
    ok = cli("probe", "-c", str(demo_fleet.config_path), "h200x4:30001", "--json")
    assert ok.returncode == 0, ok.stdout + ok.stderr
    probe = json.loads(ok.stdout)["probe"]
    assert probe["verdict"] == "OK" and probe["answer"].strip() == "4" and probe["ttft_s"] < 5
    bad = cli(
        "probe", "-c", str(demo_fleet.config_path), "old059:30000", "--json", "--no-throughput"
    )
    assert bad.returncode == 1
    probe = json.loads(bad.stdout)["probe"]
    assert probe["verdict"] == "DEGENERATE" and "repeat" in probe["reason"]
    # the expected answer next to the one given, for a looping answer as for a wrong one
    assert "expected '4', got '" in probe["reason"], probe["reason"]


def test_probe_of_a_server_that_is_not_running_says_so_without_http(demo_fleet, state_dir):
    down = cli("probe", "-c", str(demo_fleet.config_path), "h200x4:30003")
    assert down.returncode == 1, down.stdout + down.stderr
    said = down.stdout + down.stderr
    assert "h200x4:30003 is not running: nothing to probe" in said, said
    assert "forward" not in said and "HTTP" not in said and "onnect" not in said, said


def test_a_wrong_answer_fails_its_stage_shows_what_was_expected_and_is_not_timed(
    demo_fleet, state_dir
):
    """A wrong answer used to get a tick ('answer' stage OK) and a 512-token throughput run."""
    data = yaml.safe_load(demo_fleet.config_path.read_text())
    data["profiles"]["qwen8b-tp1"]["probe"] = {"prompt": "What is 2+2?", "expect": "five"}
    path = demo_fleet.config_path.with_name("hosts-wrong.yaml")
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    wrong = cli("probe", "-c", str(path), "h200x4:30001", "--json")
    assert wrong.returncode == 1
    result = json.loads(wrong.stdout)
    stages = {stage["name"]: stage for stage in result["stages"]}
    assert result["probe"]["verdict"] == "WRONG"
    assert stages["answer"]["state"] == "failed"
    assert "expected 'five', got '4'" in stages["answer"]["detail"]
    assert stages["throughput"]["state"] == "skipped"
    text = cli("probe", "-c", str(path), "h200x4:30001")
    assert "FAILED  answer" in text.stdout and "expected 'five'" in text.stdout, text.stdout


def test_the_throughput_step_stops_once_its_estimate_is_steady(demo_fleet, state_dir):
    result = cli("probe", "-c", str(demo_fleet.config_path), "h200x4:30002", "--json")
    assert result.returncode == 0, result.stdout + result.stderr
    stages = {stage["name"]: stage for stage in json.loads(result.stdout)["stages"]}
    tokens = int(re.search(r"over (\d+) tokens", stages["throughput"]["detail"]).group(1))
    assert 48 <= tokens < 512, stages["throughput"]


def test_actions_refuse_without_yes_when_not_a_terminal(demo_fleet, state_dir):
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "sglconsole",
            "kill",
            "-c",
            str(demo_fleet.config_path),
            "h200x4:30000",
        ],
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        timeout=60,
    )
    assert result.returncode == 2 and "refusing without --yes" in result.stderr


def test_restore_all_restores_a_hosts_servers_one_after_another(fleet_factory, state_dir):
    from sglconsole.sim.fleet.scenarios import QWEN8B

    drifted = [a for a in QWEN8B if a not in ("--max-running-requests", "64")]
    host = HostSpec(
        name="h2",
        gpu_model="H200",
        gpu_count=2,
        models=("Qwen3-8B",),
        sglang={"startup_s": 0.3},
        servers=[
            ServerSpec(30000 + i, "qwen8b-tp1", [i], running=[*drifted, "--port", str(30000 + i)])
            for i in range(2)
        ],
    )
    fleet = fleet_factory([host])
    path = str(fleet.config_path)
    assert cli("diff", "-c", path, "h2").returncode == 1
    result = cli("restore", "-c", path, "h2", "--all", "--yes", timeout=300)
    assert result.stdout.index("== h2:30000") < result.stdout.index("== h2:30001")
    assert cli("diff", "-c", path, "h2").returncode == 0, (
        result.stdout
    )  # both run their profile now
    actions = AuditLog(state_dir / "sglconsole" / "actions.jsonl").actions()
    starts = [a["time"] for a in actions]
    assert [a["port"] for a in actions] == [30000, 30001] and starts == sorted(starts)


def test_a_restore_that_still_loops_says_what_can_help(fleet_factory, state_dir):
    """A buggy SGLang loops on the proven config itself: a rollback to the same config is no help
    and the console must not offer it as the next step."""
    from sglconsole.sim.fleet.scenarios import demo_hosts

    (old059,) = [host for host in demo_hosts(startup_s=0.5) if host.name == "old059"]
    fleet = fleet_factory([old059])
    result = cli("restore", "-c", str(fleet.config_path), "old059:30000", "--yes")
    assert result.returncode == 1, result.stdout
    assert "probe: DEGENERATE" in result.stdout
    assert "still answers wrongly" in result.stdout and "another SGLang" in result.stdout
    assert "to bring back what ran before" not in result.stdout


def test_a_slow_probe_fails_the_step_that_measured_it(demo_fleet, state_dir):
    """A SLOW probe used to tick its throughput step (`OK throughput`) under `FAILED: SLOW`."""
    result = cli("probe", "-c", str(demo_fleet.config_path), "ct129:30000", "--json")
    data = json.loads(result.stdout)
    assert result.returncode == 1 and data["probe"]["verdict"] == "SLOW", data
    stages = {stage["name"]: stage for stage in data["stages"]}
    assert stages["answer"]["state"] == "ok"
    assert stages["throughput"]["state"] == "failed", stages["throughput"]
    assert stages["throughput"]["detail"].startswith("SLOW: "), stages["throughput"]
    quick = cli(
        "probe", "-c", str(demo_fleet.config_path), "ct129:30000", "--no-throughput", "--json"
    )
    stages = {stage["name"]: stage for stage in json.loads(quick.stdout)["stages"]}
    if json.loads(quick.stdout)["probe"]["verdict"] == "SLOW":  # judged on the answer's speed
        assert stages["answer"]["state"] == "failed", stages["answer"]
    text = cli("probe", "-c", str(demo_fleet.config_path), "ct129:30000")
    assert "FAILED  throughput" in text.stdout and "OK      throughput" not in text.stdout, (
        text.stdout
    )
