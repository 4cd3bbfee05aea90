"""What real SGLang 0.5.17 did on an H200, driven on the simulator over real sshd: a wedged
scheduler whose HTTP process keeps answering with frozen values, a console opened on it long after
its start, an idle server whose last decode line stays in the log, and a relaunch into the same
log. Each test puts the simulated host in the state (its settings, its load, its processes); none
sets the console's state."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml

from sglconsole.sim.fleet.scenarios import QWEN8B
from sglconsole.sim.fleet.start import HostSpec, ServerSpec
from tests.cli import cli
from tests.e2e.test_actions import state_dir  # noqa: F401 (a fixture)

SERVE = [*QWEN8B, "--enable-metrics", "--port", "30000"]


def h200(**sglang) -> HostSpec:
    settings = {"startup_s": 0.5, **sglang}
    return HostSpec(
        name="h200",
        sglang_version="0.5.17",
        sglang=settings,
        servers=[ServerSpec(30000, "qwen8b-tp1", [0], running=SERVE)],
    )


def set_host(fleet, **values) -> None:
    """Change the simulated host's sglang settings while its server runs (read live)."""
    path = fleet.hosts["h200"].root / "sim" / "host.json"
    data = json.loads(path.read_text())
    data.setdefault("sglang", {}).update(values)
    path.write_text(json.dumps(data))


def status(fleet) -> tuple[int, dict, float]:
    began = time.monotonic()
    result = cli("status", "-c", str(fleet.config_path), "--json", timeout=150)
    server = json.loads(result.stdout)["hosts"]["h200"]["servers"][0]
    return result.returncode, server, time.monotonic() - began


def wait_for(fleet, check, timeout: float = 60) -> dict:
    deadline = time.monotonic() + timeout
    while True:
        code, server, _took = status(fleet)
        if check(code, server) or time.monotonic() > deadline:
            return server
        time.sleep(1)


@pytest.mark.usefixtures("state_dir")
def test_a_wedged_scheduler_is_stalled_even_long_after_its_start(fleet_factory):
    # served a while (the ready line far back in its log, like the real one 1,320 lines back)
    fleet = fleet_factory(
        [h200(load={"concurrency": 4, "max_tokens": 300}, log_history_lines=3000)]
    )
    log = fleet.hosts["h200"].root / "logs" / "sglang-30000.log"
    serving = wait_for(fleet, lambda code, s: s["tok_s"] and s["status"] != "STARTING")
    assert serving["status"] not in ("STALLED", "STARTING"), serving
    assert log.stat().st_size > 300_000
    set_host(fleet, scheduler_stall=True)
    time.sleep(2)
    code, server, took = status(fleet)  # a console opened now, on the wedged server
    assert code == 1 and server["status"] == "STALLED", server
    assert "/health (it generates a token) unanswered for" in server["reason"], server
    assert server["tok_s"] is None or "starting" not in server["reason"]
    assert took < 60
    time.sleep(20)  # SGLang's own warnings and the silence under load add to the story
    code, server, _took = status(fleet)
    assert code == 1 and server["status"] == "STALLED", server
    assert "Health check failed" in server["reason"], server
    set_host(fleet, scheduler_stall=False)  # the JIT compile ended
    recovered = wait_for(fleet, lambda code, s: s["status"] != "STALLED", timeout=60)
    assert recovered["status"] != "STALLED", recovered


@pytest.mark.usefixtures("state_dir")
def test_an_idle_server_shows_no_stale_speed_and_its_load_from_the_server(fleet_factory):
    # decode lines written as if it had served, then nothing: SGLang writes none when idle
    fleet = fleet_factory([h200(log_history_lines=300)])
    time.sleep(15)
    code, server, _took = status(fleet)
    assert server["status"] in ("UP", "DRIFT"), server
    assert not server["tok_s"], server  # never the last decode line's figure as current
    assert (server["running_req"], server["queue_req"]) == (0, 0), server
    assert server["load_source"] == "loads", server


@pytest.mark.usefixtures("state_dir")
def test_capture_and_restore_never_take_the_previous_process_numbers(fleet_factory):
    # the old process served (its decode lines fill the log); a relaunch appends to the same log
    fleet = fleet_factory([h200(log_history_lines=300)])
    path = str(fleet.config_path)
    before = wait_for(fleet, lambda code, s: s["status"] not in ("STARTING", "UNKNOWN"))
    set_host(fleet, log_history_lines=0)  # the next one has served nothing
    relaunched = cli("relaunch", "h200:30000", "-c", path, "--yes", timeout=180)
    assert relaunched.returncode == 0, relaunched.stdout + relaunched.stderr
    after = wait_for(fleet, lambda code, s: s["pid"] not in (None, before["pid"]))
    assert after["pid"] != before["pid"] and not after["tok_s"], after
    captured = cli("capture", "h200:30000", "--as", "fresh", "-c", path, timeout=120)
    assert captured.returncode == 0, captured.stdout + captured.stderr
    assert "has written no busy decode line: no baseline" in captured.stdout, captured.stdout
    profile = yaml.safe_load(Path(path).read_text())["profiles"]["fresh"]
    assert not profile.get("baseline"), profile
    restored = cli("restore", "h200:30000", "-c", path, "--yes", timeout=180)
    measure = next(line for line in restored.stdout.splitlines() if "measure" in line)
    assert f"pid {after['pid']} has written no busy decode line" in measure, restored.stdout


@pytest.mark.usefixtures("state_dir")
def test_the_first_sampled_request_stalls_before_any_decode_line(fleet_factory):
    # real 0.5.17: flashinfer JIT-compiles its sampling module on the first top_p request while
    # every request waits; `status --watch` said UP serving, exit 0, for 85 s
    fleet = fleet_factory(
        [h200(jit_stall_s=90, load={"concurrency": 4, "max_tokens": 200, "sampled": True})]
    )
    log = fleet.hosts["h200"].root / "logs" / "sglang-30000.log"
    code, server, took = status(fleet)
    assert code == 1 and server["status"] == "STALLED", server
    assert "unanswered for" in server["reason"], server
    assert "Decode batch" not in log.read_text()  # stalled before its first decode line
    assert took < 60


@pytest.mark.usefixtures("state_dir")
def test_status_watch_turns_stalled_when_a_serving_scheduler_wedges(fleet_factory):
    # real 0.5.17: `status --watch` said UP serving, 12211 tok/s, 16 running for all 85 s
    # SGLang's health check gives up (503) within the stall, and the load goes on after it: the
    # real H200 showed the answer across the stall's end lost, and STALLED then stayed for good
    fleet = fleet_factory([h200(load={"concurrency": 4, "max_tokens": 300}, health_timeout_s=3)])
    watch = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "sglconsole",
            "-c",
            str(fleet.config_path),
            "status",
            "--watch",
            "--json",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    try:
        frames = iter(watch.stdout)

        def next_server() -> dict:
            return json.loads(next(frames))["hosts"]["h200"]["servers"][0]

        deadline = time.monotonic() + 60
        while not (server := next_server())["tok_s"] or server["status"] == "STARTING":
            assert time.monotonic() < deadline, server
        set_host(fleet, scheduler_stall=True)
        wedged = time.monotonic()
        while (server := next_server())["status"] != "STALLED":
            assert server["status"] != "DOWN", server
            assert time.monotonic() - wedged < 50, server  # real: never, in 85 s
        signs = ("requests in flight", "unanswered", "Health check failed")
        assert any(sign in server["reason"] for sign in signs), server["reason"]
        assert server["tok_s"] is None or time.monotonic() - wedged < 15, server
        set_host(fleet, scheduler_stall=False)
        recovered = time.monotonic()
        while (server := next_server())["status"] == "STALLED":
            assert time.monotonic() - recovered < 20, server  # its decode lines prove progress
    finally:
        watch.kill()
        watch.wait()


@pytest.mark.usefixtures("state_dir")
def test_an_idle_server_is_not_made_busy_by_the_consoles_own_requests(fleet_factory):
    # SGLang's /health generates a token (max_new_tokens=1) and the canary's prompts a few, all
    # counted in generation_tokens_total: an idle server read 0.1-0.6 tok/s, the console's own
    fleet = fleet_factory([h200()])
    watch = subprocess.Popen(
        [sys.executable, "-m", "sglconsole", "-c", str(fleet.config_path), "status", "--watch",
         "--json"],
        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
    )  # fmt: skip
    try:
        frames, counted, deadline = iter(watch.stdout), [], time.monotonic() + 60
        while time.monotonic() < deadline and len(set(counted)) < 3:
            server = json.loads(next(frames))["hosts"]["h200"]["servers"][0]
            tokens = (server.get("metrics") or {}).get("generation_tokens_total")
            if server["status"] in ("STARTING", "UNKNOWN") or tokens is None:
                continue
            assert not server["tok_s"], (server["tok_s"], counted)
            counted.append(tokens)
        # the checks and the canary ran, and the server counted their tokens: three pages at least
        assert len(set(counted)) >= 3, counted
    finally:
        watch.kill()
        watch.wait()
