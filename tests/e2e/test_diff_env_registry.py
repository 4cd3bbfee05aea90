"""Env drift judged by the host's own SGLang registry, over real SSH on simulated hosts.

`SGLANG_ENABLE_SPEC_V2` is the case (sglang/srt/environ.py of each release): 0.5.11 declares it
EnvBool(True) and reads it (only `=0` selects spec V1); 0.5.14-0.5.20 read it only to warn that it
was removed (the H200's 0.5.17 logs so); 0.5.23 does not read it at all. So a
0.5.23 server started without it, against a profile that sets it, is not DRIFT ("no effect
here"), while on 0.5.11 a server running it `=0` is, and one running without it means what the
profile's `=1` means (unset = the registry's default). Before the registry judged, the first
was a false DRIFT (ONLY_PROFILE) and the third a false one too."""

from __future__ import annotations

import dataclasses
import json

import pytest

from sglconsole.sim.fleet.scenarios import PROVEN_27B, demo_profiles, seed_host, seed_profile
from sglconsole.sim.fleet.start import HostSpec, ServerSpec, SimFleet
from tests.cli import cli
from tests.e2e.conftest import SSH_MODE

NEW = "0.5.23"
MID = "0.5.17"


@pytest.fixture(scope="module")
def fleet(tmp_path_factory):
    # the old hosts.yaml's profile: the proven 27B launch with SGLANG_ENABLE_SPEC_V2=1
    with_v2 = {**demo_profiles()["qwen27b-tp2-mtp"], "env": {"SGLANG_ENABLE_SPEC_V2": "1"}}
    new = HostSpec(
        "new23",
        gpu_model="A6000",
        gpu_count=2,
        sglang_version=NEW,
        models=("Qwen3.6-27B",),
        sglang={"startup_s": 0.5},
        servers=[ServerSpec(30000, "with-v2", [0, 1], running=PROVEN_27B)],
    )
    mid = dataclasses.replace(new, name="mid17", sglang_version=MID)
    seed = seed_host("ct130", startup_s=0.5)
    [running] = seed.servers
    seed = dataclasses.replace(
        seed,
        gpu_count=4,
        servers=[
            dataclasses.replace(running, running_env={"SGLANG_ENABLE_SPEC_V2": "0"}),
            dataclasses.replace(
                running,
                port=30001,
                profile="qwen27b-0511-b",
                gpus=[2, 3],
                running=on_port(running.running, 30001),
                running_env={},
            ),
        ],
    )
    second = {**seed_profile(), "args": on_port(seed_profile()["args"], 30001)}
    profiles = {
        **demo_profiles(),
        "with-v2": with_v2,
        "qwen27b-0511": seed_profile(),
        "qwen27b-0511-b": second,
    }
    sim = SimFleet(tmp_path_factory.mktemp("envreg"), [new, mid, seed], profiles, ssh=SSH_MODE)
    sim.start()
    sim.wait_ready()
    yield sim
    sim.stop()


def on_port(args: list[str], port: int) -> list[str]:
    at = args.index("--port")
    return [*args[: at + 1], str(port), *args[at + 2 :]]


def diff(fleet: SimFleet, target: str) -> tuple[int, dict, str]:
    config = str(fleet.config_path)
    data = cli("diff", "-c", config, target, "--json")
    text = cli("diff", "-c", config, target)
    return data.returncode, json.loads(data.stdout)[target], " ".join(text.stdout.split())


def spec_v2_row(report: dict) -> dict:
    return next(row for row in report["rows"] if row["dest"] == "SGLANG_ENABLE_SPEC_V2")


def test_a_variable_0_5_23_does_not_read_is_no_effect_here_not_drift(fleet):
    code, report, text = diff(fleet, "new23:30000")
    row = spec_v2_row(report)
    assert row["state"] == "NO_EFFECT" and row["running"] is None and row["profile"] == "1"
    assert row["note"] == f"no effect here (SGLang {NEW} does not read it)"
    assert not report["differs"] and code == 0, report
    # judged by the host's own source, and the text says so
    assert "sglang/srt/environ.py" in report["env_judge"] and "on the host" in report["env_judge"]
    assert f"$SGLANG_ENABLE_SPEC_V2: no effect here (SGLang {NEW} does not read it)" in text


def test_a_variable_0_5_17_reads_only_to_warn_it_is_gone_is_no_effect_here(fleet):
    """The host's source has `if os.getenv("SGLANG_ENABLE_SPEC_V2") is not None: warn(...)`:
    read, but only to say it was removed; before, that read made it DRIFT ("read outside")."""
    code, report, text = diff(fleet, "mid17:30000")
    row = spec_v2_row(report)
    assert row["state"] == "NO_EFFECT" and row["profile"] == "1", row
    assert row["note"].startswith(f"no effect here (SGLang {MID} reads it only to warn it is gone")
    assert not report["differs"] and code == 0, report
    assert "on the host" in report["env_judge"]


def test_on_0_5_11_the_switch_is_read_and_0_drifts(fleet):
    code, report, text = diff(fleet, "ct130:30000")
    row = spec_v2_row(report)
    assert (row["state"], row["profile"], row["running"]) == ("DIFFERENT", "1", "0")
    assert report["differs"] and code == 1
    assert [r["dest"] for r in report["rows"] if r["state"] != "SAME"] == ["SGLANG_ENABLE_SPEC_V2"]


def test_on_0_5_11_unset_means_the_registry_default(fleet):
    code, report, _ = diff(fleet, "ct130:30001")
    row = spec_v2_row(report)
    assert row["state"] == "SAME" and row["running"] is None
    assert "default is True" in row["note"]
    assert not report["differs"] and code == 0, report
