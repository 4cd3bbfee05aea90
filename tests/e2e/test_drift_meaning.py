"""Equivalent spellings are not drift (issue #24): on a simulated 0.5.23 host over real SSH, a
server started with the deprecated `--disable-cuda-graph` matches a profile that says
`--cuda-graph-backend-{decode,prefill} disabled`, judged by the resolved values /server_info
lists (its cuda_graph_config), and the diff says which source judged; a profile that asks for
decode graphs still drifts from that server."""

from __future__ import annotations

import json

import pytest

from sglconsole.sim.fleet.scenarios import QWEN8B, demo_profiles
from sglconsole.sim.fleet.start import HostSpec, ServerSpec, SimFleet
from tests.cli import cli
from tests.e2e.conftest import SSH_MODE

PER_PHASE_OFF = [
    "--cuda-graph-backend-decode",
    "disabled",
    "--cuda-graph-backend-prefill",
    "disabled",
]
DECODE_ON = ["--cuda-graph-backend-decode", "full", "--cuda-graph-backend-prefill", "disabled"]


@pytest.fixture(scope="module")
def fleet(tmp_path_factory):
    profiles = demo_profiles()
    base = profiles["qwen8b-tp1"]
    profiles["per-phase-off"] = {**base, "args": [*QWEN8B, *PER_PHASE_OFF]}
    profiles["decode-on"] = {**base, "args": [*QWEN8B, *DECODE_ON]}
    old_spelling = [*QWEN8B, "--disable-cuda-graph"]
    hosts = [
        HostSpec(
            "h23",
            gpu_count=2,
            sglang_version="0.5.23",
            servers=[
                ServerSpec(30000, "per-phase-off", [0], running=old_spelling),
                ServerSpec(30001, "decode-on", [1], running=old_spelling),
            ],
        )
    ]
    sim = SimFleet(tmp_path_factory.mktemp("meaning"), hosts, profiles, ssh=SSH_MODE)
    sim.start()
    sim.wait_ready()
    yield sim
    sim.stop()


def diff(fleet: SimFleet, port: int) -> tuple[int, str, dict]:
    config = str(fleet.config_path)
    text = cli("diff", "-c", config, f"h23:{port}")
    data = cli("diff", "-c", config, f"h23:{port}", "--json")
    return text.returncode, " ".join(text.stdout.split()), json.loads(data.stdout)[f"h23:{port}"]


def rows(data: dict) -> dict[str, dict]:
    return {row["dest"]: row for row in data["rows"] if row["kind"] == "flag"}


def test_the_deprecated_spelling_of_the_same_setting_is_no_drift_and_says_who_judged(fleet):
    code, said, data = diff(fleet, 30000)
    assert code == 0 and not data["differs"], said
    flags = rows(data)
    for phase in ("decode", "prefill"):
        row = flags[f"cuda_graph_backend_{phase}"]
        assert row["state"] == "SAME" and row["resolved"] == "disabled", row
        assert row["judged_by"] == "resolved values in /server_info", row
    own = flags["disable_cuda_graph"]
    assert own["state"] == "SAME" and own["running"] is True
    assert own["judged_by"] == "by SGLang's deprecation note"
    assert own["meaning"] == (
        "--disable-cuda-graph read as --cuda-graph-backend-{decode,prefill}=disabled"
    )
    assert "--disable-cuda-graph read as --cuda-graph-backend-{decode,prefill}=disabled" in said
    assert "--cuda-graph-backend-decode: same meaning (resolved values in /server_info)" in said
    assert "matches the profile" in said


def test_a_real_difference_behind_the_deprecated_spelling_still_drifts(fleet):
    code, said, data = diff(fleet, 30001)
    assert code == 1 and data["differs"], said
    decode = rows(data)["cuda_graph_backend_decode"]
    assert (decode["state"], decode["profile"], decode["resolved"]) == (
        "DIFFERENT",
        "full",
        "disabled",
    )
    assert decode["judged_by"] == "resolved values in /server_info"
    assert rows(data)["cuda_graph_backend_prefill"]["state"] == "SAME"
    assert "--cuda-graph-backend-decode: differs (resolved values in /server_info)" in said
    assert "--cuda-graph-backend-decode: disabled (profile full)" in said


def test_status_agrees(fleet):
    done = cli("status", "-c", str(fleet.config_path), "--json")
    servers = {s["port"]: s for s in json.loads(done.stdout)["hosts"]["h23"]["servers"]}
    assert servers[30000]["drift"] is False, servers[30000]
    assert servers[30001]["drift"] is True, servers[30001]
