"""`sglconsole upgrade HOST:PORT --to VERSION` over real SSH on simulated hosts: the seed story's
0.5.9 host translated to 0.5.11 with what 0.5.11's ServerArgs requires added (read from its
generated checks), the model card's minimum SGLang named, a 0.5.12 profile's CUDA-graph flags
rewritten for 0.5.23; --dry-run changes nothing."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import time

import pytest
import yaml

from sglconsole import config
from sglconsole.remote.ssh.connection import SshFleet
from sglconsole.sim.fleet.scenarios import NEXT_059, NEXT_CARD, QWEN8B, demo_profiles
from sglconsole.sim.fleet.start import HostSpec, ServerSpec
from tests.cli import cli, ctrl_c_default

GRAPHS_0512 = [*QWEN8B, "--cuda-graph-max-bs", "16", "--cuda-graph-bs", "1", "2", "4", "8", "16"]


def old059() -> HostSpec:
    """The seed story's host: SGLang 0.5.9, whose NEXTN server loops (degenerate output)."""
    return HostSpec(
        name="old059",
        gpu_model="H200",
        gpu_count=1,
        sglang_version="0.5.9",
        models=("Qwen3-Next-80B-A3B",),
        sglang={"startup_s": 1.0, "degenerate": ["0.5.9", "0.5.10"], "load": {"concurrency": 1}},
        servers=[
            ServerSpec(
                30000,
                "qwen-next-mtp",
                [0],
                running=NEXT_059,
                running_env={"SGLANG_ENABLE_SPEC_V2": "1"},
            )
        ],
        files={"models/Qwen3-Next-80B-A3B/README.md": NEXT_CARD},
    )


def h0512(looping: list[str] | None = None, gpu_count: int = 1) -> HostSpec:
    """A 0.5.12 host; LOOPING: the releases whose output loops on it."""
    return HostSpec(
        name="h0512",
        gpu_model="H200",
        gpu_count=gpu_count,
        sglang_version="0.5.12",
        models=("Qwen3-8B",),
        sglang={"startup_s": 1.0, "degenerate": looping or [], "load": {"concurrency": 2}},
        servers=[ServerSpec(30000, "graphs-0512", [0], running=GRAPHS_0512)],
    )


def profiles() -> dict:
    return {
        **demo_profiles(),
        "graphs-0512": {
            "description": "Qwen3-8B with its CUDA graphs sized, as proven on 0.5.12",
            "args": GRAPHS_0512,
            "baseline": {"gen_throughput": 95.0, "concurrency": 2},
            "startup_timeout": 120,
        },
    }


@pytest.fixture
def state_dir(tmp_path, monkeypatch):
    folder = tmp_path / "state"
    monkeypatch.setenv("XDG_STATE_HOME", str(folder))
    return folder


def on_host(path, host: str, argv: list[str]) -> str:
    async def run() -> str:
        fleet = SshFleet(config.load(path).hosts)
        try:
            return (await fleet[host].run(argv)).stdout
        finally:
            await fleet.close()

    return asyncio.run(run())


def pids(path, host: str = "old059") -> str:
    return on_host(path, host, ["pgrep", "-f", "sglang.launch_server"]).strip()


def running_python(path, host: str) -> str:
    """The interpreter of the server on port 30000 (argv[0] of its main process)."""
    ps = on_host(path, host, ["ps", "-eo", "args"])
    line = next(line for line in ps.splitlines() if "sglang.launch_server" in line)
    return line.split()[0]


def test_seed_story_translation_adds_what_0511_requires_and_changes_nothing(fleet_factory):
    fleet = fleet_factory([old059()], profiles())
    path = str(fleet.config_path)
    before = pids(fleet.config_path)
    result = cli("upgrade", "-c", path, "old059:30000", "--to", "0.5.11", "--dry-run", "--json")
    assert result.returncode == 0, result.stdout + result.stderr
    report = json.loads(result.stdout)
    assert report["from_version"] == "0.5.9" and report["to_version"] == "0.5.11"
    translation = report["translation"]
    assert translation["ok"]
    added = [change for change in translation["changes"] if change["kind"] == "added"]
    assert [change["new"] for change in added] == [["--mamba-scheduler-strategy", "extra_buffer"]]
    assert "ServerArgs refuses this launch" in added[0]["reason"]
    assert "Speculative decoding for Qwen3NextForCausalLM" in added[0]["reason"]
    # the variable was already set: kept, now with the reason 0.5.11 needs it
    spec_v2 = [c for c in translation["changes"] if c["old"] == ["SGLANG_ENABLE_SPEC_V2=1"]]
    assert spec_v2 and spec_v2[0]["kind"] == "kept" and "ServerArgs asks" in spec_v2[0]["reason"]
    new_args = translation["new"]["args"]
    assert new_args[-2:] == ["--mamba-scheduler-strategy", "extra_buffer"]
    old_args = translation["old"]["args"]
    assert new_args[: len(old_args)] == old_args  # every other value byte-exact
    assert translation["new"]["env"] == {"SGLANG_ENABLE_SPEC_V2": "1"}
    card = report["model_card"]
    assert card["min_sglang"] == "0.5.10" and card["host_older"] and not card["target_older"]
    assert card["architecture"] == "Qwen3NextForCausalLM"
    venv = report["venv"]
    assert venv.endswith("-sglang-0.5.11") and report["python"] == venv + "/bin/python"
    assert report["commands"][0].endswith(f"-m venv {venv}")
    assert report["commands"][1] == f"{venv}/bin/python -m pip install sglang==0.5.11"
    assert report["commands"][2].startswith(f"SGLANG_ENABLE_SPEC_V2=1 {venv}/bin/python -m")
    assert pids(fleet.config_path) == before  # a dry run changes nothing
    shown = on_host(fleet.config_path, "old059", ["ls", venv.rsplit("/", 1)[0]])
    assert venv.rsplit("/", 1)[1] not in shown

    text = cli("upgrade", "-c", path, "old059:30000", "--to", "0.5.11", "--dry-run")
    assert text.returncode == 0, text.stdout + text.stderr
    lines = text.stdout.splitlines()
    assert "model card (README.md): sglang>=0.5.10; the host's 0.5.9 is older" in text.stdout
    first = next(line for line in lines if line.lstrip().startswith(("added", "kept")))
    assert first.split()[:3] == ["added", "--mamba-scheduler-strategy", "extra_buffer"]
    assert "dry run: these remote commands would run:" in text.stdout

    # `sglconsole --dry-run ACTION`, as for every action
    assert cli("--dry-run", "upgrade", "-c", path, "old059:30000", "--to", "0.5.11").returncode == 0
    assert pids(fleet.config_path) == before

    # --python: an interpreter that already has the release; nothing to install
    named = cli(
        "upgrade", "-c", path, "old059:30000", "--to", "0.5.11", "--python", "/opt/sg11/bin/python",
        "--dry-run", "--json",
    )  # fmt: skip
    named_report = json.loads(named.stdout)
    assert named_report["python"] == "/opt/sg11/bin/python" and named_report["venv"] is None
    assert [line.split()[1] for line in named_report["commands"]] == ["/opt/sg11/bin/python"]


def test_a_0512_profile_gets_its_cuda_graph_flags_rewritten_for_0523(fleet_factory):
    fleet = fleet_factory([h0512()], profiles())
    result = cli(
        "upgrade", "-c", str(fleet.config_path), "h0512:30000", "--to", "0.5.23", "--dry-run",
        "--json",
    )  # fmt: skip
    assert result.returncode == 0, result.stdout + result.stderr
    translation = json.loads(result.stdout)["translation"]
    renamed = {
        tuple(change["old"]): change
        for change in translation["changes"]
        if change["kind"] == "renamed"
    }
    assert renamed[("--cuda-graph-max-bs", "16")]["new"] == ["--cuda-graph-max-bs-decode", "16"]
    graphs = renamed[("--cuda-graph-bs", "1", "2", "4", "8", "16")]
    assert graphs["new"] == ["--cuda-graph-bs-decode", "1", "2", "4", "8", "16"]
    assert "removed in SGLang 0.5.20" in graphs["reason"]
    assert "--cuda-graph-max-bs" not in translation["new"]["args"]


def test_seed_story_end_to_end_promotes_the_translated_profile(fleet_factory, state_dir):
    fleet = fleet_factory([old059()], profiles())
    path = fleet.config_path
    old_python = running_python(path, "old059")
    result = cli("upgrade", "-c", str(path), "old059:30000", "--to", "0.5.11", "--yes", "--json")
    assert result.returncode == 0, result.stdout + result.stderr
    report = json.loads(result.stdout)
    assert report["ok"] and report["verdict"] == "promoted", report["summary"]
    stages = {stage["name"]: stage for stage in report["stages"]}
    assert stages["install"]["state"] == "ok" and "SGLang 0.5.11" in stages["install"]["detail"]
    assert report["probe"]["verdict"] == "OK"  # 0.5.9 looped; 0.5.11 answers
    # the A/B at the baseline's concurrency (1), like with like: it reaches the baseline
    (ab,) = report["ab"]
    assert ab.startswith("c=1") and "vs baseline 55 (" in ab, ab
    assert stages["a/b"]["state"] == "ok"
    # promoted: the new profile with its provenance and measured baseline, the server pointed at
    # it, the old profile kept
    cfg = config.load(path)
    name = "qwen-next-mtp-sglang-0.5.11"
    assert cfg.server("old059", 30000).profile == name and "qwen-next-mtp" in cfg.profiles
    promoted = cfg.profiles[name]
    assert promoted.args[-2:] == ["--mamba-scheduler-strategy", "extra_buffer"]
    assert promoted.env == {"SGLANG_ENABLE_SPEC_V2": "1"}
    assert promoted.python == report["python"] and promoted.requires_sglang is not None
    assert "translated from SGLang 0.5.9 to 0.5.11" in (promoted.description or "")
    assert promoted.baseline.sglang_version == "0.5.11" and promoted.baseline.gen_throughput
    # the new server runs from the new venv; the old env is untouched and still 0.5.9
    assert running_python(path, "old059") == report["python"]
    asked = "import sglang; print(sglang.__version__)"
    assert on_host(path, "old059", [old_python, "-c", asked]).strip() == "0.5.9"
    actions = [
        json.loads(line)
        for line in (state_dir / "sglconsole" / "actions.jsonl").read_text().splitlines()
    ]
    ended = [record["action"] for record in actions if record["phase"] == "end"]
    assert "upgrade" in ended and "restore" in ended  # each step in the audit log


def test_a_failed_canary_rolls_back_and_the_old_server_serves_again(fleet_factory, state_dir):
    fleet = fleet_factory([h0512(looping=["0.5.23"])], profiles())
    path = fleet.config_path
    before = config.load(path).server("h0512", 30000).profile
    result = cli("upgrade", "-c", str(path), "h0512:30000", "--to", "0.5.23", "--yes", "--json")
    assert result.returncode == 1, result.stdout + result.stderr
    report = json.loads(result.stdout)
    assert report["verdict"] == "rolled_back" and "DEGENERATE" in report["reason"], report
    assert "serves again" in report["summary"], report["summary"]
    assert config.load(path).server("h0512", 30000).profile == before  # hosts.yaml unchanged
    assert running_python(path, "h0512").endswith("ml-env/bin/python3")  # the old env's server
    probed = cli("probe", "-c", str(path), "h0512:30000", "--json")
    assert json.loads(probed.stdout)["probe"]["verdict"] in ("OK", "SLOW"), probed.stdout


def test_ctrl_c_during_the_canary_brings_the_old_server_back(fleet_factory, state_dir):
    """Ctrl-C once the canary has stopped the old server and answered its probe (the A/B bench
    runs): the old server is launched again from its own env, hosts.yaml is unchanged."""
    fleet = fleet_factory([h0512()], profiles())
    path = fleet.config_path
    argv = ["upgrade", "-c", str(path), "h0512:30000", "--to", "0.5.23", "--yes"]
    process = subprocess.Popen(
        [sys.executable, "-m", "sglconsole", *argv],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "COLUMNS": "200", "XDG_STATE_HOME": str(state_dir)},
        preexec_fn=ctrl_c_default,
    )
    seen = []
    try:
        deadline = time.monotonic() + 120
        while not any(line.lstrip().startswith("OK") and "answer" in line for line in seen):
            assert time.monotonic() < deadline and process.poll() is None, "".join(seen)
            seen.append(process.stdout.readline())
        assert running_python(path, "h0512").endswith("-sglang-0.5.23/bin/python")  # the canary
        process.send_signal(signal.SIGINT)
        out, err = process.communicate(timeout=120)
    finally:
        if process.poll() is None:
            process.kill()
    assert process.returncode == 130, "".join(seen) + out + err
    assert running_python(path, "h0512").endswith("ml-env/bin/python3"), out + err
    assert config.load(path).server("h0512", 30000).profile == "graphs-0512"
    probed = cli("probe", "-c", str(path), "h0512:30000", "--json")
    assert json.loads(probed.stdout)["probe"]["verdict"] in ("OK", "SLOW"), probed.stdout
    ended = [
        json.loads(line)
        for line in (state_dir / "sglconsole" / "actions.jsonl").read_text().splitlines()
    ]
    upgrade = [record for record in ended if record["action"] == "upgrade"][-1]
    assert upgrade["phase"] == "end" and not upgrade["ok"] and "serves again" in upgrade["outcome"]


def test_preflight_warns_when_the_model_card_asks_for_a_newer_sglang(fleet_factory):
    fleet = fleet_factory([old059()], profiles())
    result = cli("check", "-c", str(fleet.config_path), "--against", "old059")
    assert result.returncode == 0, result.stdout + result.stderr  # a hint, not a refusal
    assert (
        "WARN model card: README.md asks for sglang>=0.5.10; the host's SGLang 0.5.9 is older"
        in result.stdout
    ), result.stdout


def test_a_canary_under_the_baseline_in_the_ab_bench_rolls_back(fleet_factory, state_dir):
    """It answers right, but the A/B bench finds it under the baseline at the baseline's own
    concurrency: not promoted, the old server back."""
    fast = profiles()
    fast["graphs-0512"] = {
        **fast["graphs-0512"],
        "baseline": {"gen_throughput": 900.0, "concurrency": 2},
    }
    fleet = fleet_factory([h0512()], fast)
    path = fleet.config_path
    result = cli("upgrade", "-c", str(path), "h0512:30000", "--to", "0.5.23", "--yes", "--json")
    assert result.returncode == 1, result.stdout + result.stderr
    report = json.loads(result.stdout)
    assert report["verdict"] == "rolled_back", report["summary"]
    assert report["reason"].startswith("A/B: c=2") and "of the baseline's 900" in report["reason"]
    assert "serves again" in report["summary"]
    assert config.load(path).server("h0512", 30000).profile == "graphs-0512"
    assert running_python(path, "h0512").endswith("ml-env/bin/python3")


def test_a_canary_on_free_gpus_runs_beside_the_old_server_then_switches(fleet_factory, state_dir):
    fleet = fleet_factory([h0512(gpu_count=2)], profiles())
    path = fleet.config_path
    old_pid = pids(path, "h0512")
    argv = ["upgrade", "-c", str(path), "h0512:30000", "--to", "0.5.23", "--gpus", "1"]
    result = cli(*argv, "--yes", "--json")
    assert result.returncode == 0, result.stdout + result.stderr
    report = json.loads(result.stdout)
    assert report["verdict"] == "promoted", report["summary"]
    names = [stage["name"] for stage in report["stages"]]
    port = next(s for s in report["stages"] if s["name"] == "canary port")["detail"]
    assert port.startswith("h0512:30100 on GPU 1"), port
    # the old server kept serving until the canary had passed and was stopped: the switch (a
    # restore on its own GPUs) measures it first
    assert names.index("a/b") < names.index("measure") < names.index("promote"), names
    assert names.count("a/b") == 1  # the switch is judged by its probe, the A/B was the canary's
    canary_log = [
        json.loads(line)
        for line in (state_dir / "sglconsole" / "actions.jsonl").read_text().splitlines()
    ]
    stopped = [r for r in canary_log if r["action"] == "kill" and r["phase"] == "end"]
    assert [r["port"] for r in stopped] == [30100]  # the canary never outlives its verdict
    assert pids(path, "h0512") != old_pid and running_python(path, "h0512").endswith(
        "-sglang-0.5.23/bin/python"
    )
    assert config.load(path).server("h0512", 30000).profile == "graphs-0512-sglang-0.5.23"


def test_a_failed_canary_on_free_gpus_leaves_the_old_server_untouched(fleet_factory, state_dir):
    fleet = fleet_factory([h0512(looping=["0.5.23"], gpu_count=2)], profiles())
    path = fleet.config_path
    old_pid = pids(path, "h0512")
    argv = ["upgrade", "-c", str(path), "h0512:30000", "--to", "0.5.23", "--gpus", "1"]
    result = cli(*argv, "--yes", "--json")
    assert result.returncode == 1, result.stdout + result.stderr
    report = json.loads(result.stdout)
    assert report["verdict"] == "rejected" and "DEGENERATE" in report["reason"], report
    assert pids(path, "h0512") == old_pid  # never stopped; the canary is gone
    assert config.load(path).server("h0512", 30000).profile == "graphs-0512"


def test_a_hosts_yaml_the_safe_editor_cannot_change_is_left_whole(fleet_factory, state_dir):
    """Profiles written in flow style cannot take a new entry in place: the canary passed and
    serves, hosts.yaml is left exactly as it was (no server pointed at a profile it lacks), and
    the verdict says what runs and how to bring the old profile back."""
    fleet = fleet_factory([h0512()], profiles())
    path = fleet.config_path
    written = path.read_text()
    head, tail = written.split("\nprofiles:\n")
    data = yaml.safe_load(written)
    text = head + "\nprofiles: " + json.dumps(data["profiles"]) + "\n"
    assert yaml.safe_load(text) == data  # the same file, its profiles in flow style
    path.write_text(text)
    result = cli("upgrade", "-c", str(path), "h0512:30000", "--to", "0.5.23", "--yes", "--json")
    assert result.returncode == 1, result.stdout + result.stderr
    report = json.loads(result.stdout)
    assert report["verdict"] == "not_promoted", report["summary"]
    assert "hosts.yaml was not changed" in report["summary"], report["summary"]
    assert "sglconsole restore h0512:30000" in report["summary"]
    assert path.read_text() == text
    assert running_python(path, "h0512").endswith("-sglang-0.5.23/bin/python")
