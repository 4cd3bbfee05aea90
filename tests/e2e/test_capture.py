"""capture: a running server or a systemd unit becomes a profile; hosts.yaml keeps its comments."""

from __future__ import annotations

import time

import pytest
import yaml

from sglconsole import config
from tests.cli import cli
from tests.e2e.test_actions import ct129

UNIT = r"""# sglang-30000.service: the proven launch, kept by ops (do not edit by hand)
[Unit]
Description=SGLang Qwen3.6-27B TP2 MTP
After=network-online.target

[Service]
Type=simple
User=root
WorkingDirectory=/srv/models
Environment="SGLANG_ENABLE_SPEC_V2=1"
Environment=NCCL_P2P_DISABLE=0 "MODEL_DIR=/srv/models"
EnvironmentFile=-/srv/models/sglang.env
# the command; continuations as ops write them
ExecStart=/srv/ml-env/bin/python3 -m sglang.launch_server \
    --model-path ${MODEL_DIR}/Qwen3.6-27B \
    --port 30000 --host 0.0.0.0 --tp-size 2 \
    --mem-fraction-static 0.88 --context-length 131072 --max-running-requests 16 \
    --mamba-full-memory-ratio 0.5 --reasoning-parser qwen3 --tool-call-parser qwen3_coder \
    --speculative-algorithm NEXTN --speculative-num-steps 3 --speculative-eagle-topk 1 \
    --speculative-num-draft-tokens 4 --trust-remote-code \
    --served-model-name "Qwen 27B (MTP)"
Restart=on-failure

[Install]
WantedBy=multi-user.target
"""

EXPECTED_ARGS = [  # no --port: the server entry owns it
    "--model-path",
    "/srv/models/Qwen3.6-27B",
    "--host",
    "0.0.0.0",
    "--tp-size",
    "2",
    "--mem-fraction-static",
    "0.88",
    "--context-length",
    "131072",
    "--max-running-requests",
    "16",
    "--mamba-full-memory-ratio",
    "0.5",
    "--reasoning-parser",
    "qwen3",
    "--tool-call-parser",
    "qwen3_coder",
    "--speculative-algorithm",
    "NEXTN",
    "--speculative-num-steps",
    "3",
    "--speculative-eagle-topk",
    "1",
    "--speculative-num-draft-tokens",
    "4",
    "--trust-remote-code",
    "--served-model-name",
    "Qwen 27B (MTP)",
]


@pytest.fixture
def fleet(fleet_factory, tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    fleet = fleet_factory([ct129()])
    # a hand-written config with comments, around the simulator's
    original = fleet.config_path.read_text()
    commented = "# ops fleet -- keep these comments\n" + original.replace(
        "profiles:", "# proven profiles below\nprofiles:"
    )
    fleet.config_path.write_text(commented)
    return fleet


def test_capture_a_systemd_unit_with_continuations_and_environment(fleet):
    host = fleet.hosts["ct129"]
    units = host.root / ".config" / "systemd" / "user"
    units.mkdir(parents=True)
    (units / "sglang-30000.service").write_text(UNIT)
    (host.root / "models" / "sglang.env").write_text(
        "# from the env file\nHF_HUB_OFFLINE=1\nHF_TOKEN='hf_secret'\n"
    )
    before = fleet.config_path.read_text()
    result = cli(
        "capture",
        "-c",
        str(fleet.config_path),
        "ct129",
        "--from-systemd",
        "sglang-30000.service",
        "--as",
        "from-unit",
    )
    assert result.returncode == 0, result.stdout + result.stderr
    after = fleet.config_path.read_text()
    assert after.startswith(
        before.rstrip("\n")
    )  # every original byte, comments included, is still there
    profile = yaml.safe_load(after)["profiles"]["from-unit"]
    assert profile["python"] == "/srv/ml-env/bin/python3"
    assert profile["args"] == EXPECTED_ARGS
    assert profile["env"] == {
        "SGLANG_ENABLE_SPEC_V2": "1",
        "NCCL_P2P_DISABLE": "0",
        "MODEL_DIR": "/srv/models",
        "HF_HUB_OFFLINE": "1",
        "HF_TOKEN": "${HF_TOKEN}",
    }  # the secret stays out of the file
    assert profile["workdir"] == "/srv/models"
    config.load(fleet.config_path)  # still valid
    again = cli(
        "capture",
        "-c",
        str(fleet.config_path),
        "ct129",
        "--from-systemd",
        "sglang-30000.service",
        "--as",
        "from-unit",
    )
    assert again.returncode == 1 and "already exists" in again.stdout


def test_capture_the_running_server_with_a_baseline(fleet):
    log = fleet.hosts["ct129"].root / "logs" / "sglang-30000.log"
    deadline = time.monotonic() + 30
    while log.read_text().count("#running-req: 1") < 4:  # busy decode lines to measure
        assert time.monotonic() < deadline, log.read_text()[-2000:]
        time.sleep(0.5)
    result = cli("capture", "-c", str(fleet.config_path), "ct129:30000", "--as", "what-runs")
    assert result.returncode == 0, result.stdout + result.stderr
    data = yaml.safe_load(fleet.config_path.read_text())
    profile = data["profiles"]["what-runs"]
    assert "--speculative-algo" in profile["args"] and profile["python"].endswith("/bin/python3")
    assert "CUDA_VISIBLE_DEVICES" not in profile.get("env", {})  # the server entry owns GPU pinning
    assert "--port" not in profile["args"]  # and its port
    baseline = profile["baseline"]
    assert baseline["gen_throughput"] > 0 and baseline["concurrency"] == 1, baseline
    assert fleet.config_path.read_text().startswith("# ops fleet -- keep these comments\n")
    assert "# proven profiles below" in fleet.config_path.read_text()


def test_capture_of_nothing_running_fails_clearly(fleet):
    result = cli("capture", "-c", str(fleet.config_path), "ct129:31999", "--as", "nothing")
    assert result.returncode == 1 and "nothing runs on ct129:31999" in result.stdout
