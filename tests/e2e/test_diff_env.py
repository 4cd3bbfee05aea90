"""`diff` over real SSH on a simulated host whose server carries a CUDA image's environment (the
real 0.5.17 capture's): build variables are their own group, the 2 KB NVIDIA_REQUIRE_CUDA is cut
where shown (diff text and JSON, status --json), env rows say the value in effect, and a second
diff of the same process is answered from the host-parser cache (12-14 s on a real host)."""

from __future__ import annotations

import json

import pytest

from sglconsole.sim.fleet.scenarios import QWEN8B, demo_profiles
from sglconsole.sim.fleet.start import HostSpec, ServerSpec, SimFleet
from tests.cli import cli
from tests.core.test_drift_env import environ_0_5_17
from tests.e2e.conftest import SSH_MODE

REAL = environ_0_5_17()
IMAGE_ENV = {
    name: REAL[name]
    for name in ("TORCH_CUDA_ARCH_LIST", "CUDA_HOME", "NVIDIA_REQUIRE_CUDA", "CUDA_VERSION")
}


@pytest.fixture(scope="module")
def fleet(tmp_path_factory):
    server = ServerSpec(30000, "qwen8b-tp1", [0], running=QWEN8B, running_env=IMAGE_ENV)
    sim = SimFleet(
        tmp_path_factory.mktemp("diffenv"),
        [HostSpec("img", servers=[server])],
        demo_profiles(),
        ssh=SSH_MODE,
    )
    sim.start()
    sim.wait_ready()
    yield sim
    sim.stop()


def parser_runs(fleet: SimFleet, tmp_path) -> list[str]:
    """Counts the host parser's runs: its server_args module appends a line each time it is
    imported (the simulated server itself imported it before the marker was put in)."""
    marker = tmp_path / "parser-runs"
    [server_args] = (fleet.hosts["img"].root / "env").rglob("sglang/srt/server_args.py")
    text = server_args.read_text()
    line = f"open({str(marker)!r}, 'a').write('parsed\\n')\n"
    if not text.startswith(line):
        server_args.write_text(line + text)
    return marker


def test_a_second_diff_of_the_same_process_does_not_ask_the_host_parser_again(fleet, tmp_path):
    marker = parser_runs(fleet, tmp_path)
    config = str(fleet.config_path)
    first = cli("diff", "-c", config, "img:30000", "--json")
    assert first.returncode == 0, first.stdout + first.stderr
    assert marker.read_text().count("parsed") == 1
    second = cli("diff", "-c", config, "img:30000", "--json")
    assert second.returncode == 0 and json.loads(second.stdout) == json.loads(first.stdout)
    assert marker.read_text().count("parsed") == 1  # answered from the parser cache


def diff_text(fleet: SimFleet) -> tuple[list[str], str]:
    """diff's lines, and its words joined (the env lines wrap at the terminal's width)."""
    done = cli("diff", "-c", str(fleet.config_path), "img:30000")
    assert done.returncode == 0, done.stdout + done.stderr  # no drift: the profile sets none
    return done.stdout.splitlines(), " ".join(done.stdout.split())


def diff_json(fleet: SimFleet) -> dict:
    done = cli("diff", "-c", str(fleet.config_path), "img:30000", "--json")
    return json.loads(done.stdout)["img:30000"]


def test_diff_shows_build_variables_as_their_own_group(fleet):
    _, said = diff_text(fleet)
    build = said.split("build environment", 1)[1].split("ambient environment", 1)[0]
    assert "TORCH_CUDA_ARCH_LIST=9.0a" in build and "CUDA_HOME=/usr/local/cuda" in build
    ambient = said.split("ambient environment", 1)[1]
    assert "TORCH_CUDA_ARCH_LIST" not in ambient and "CUDA_VERSION=13.0.2" in ambient
    data = diff_json(fleet)
    assert data["build_env"]["TORCH_CUDA_ARCH_LIST"] == "9.0a"
    assert "TORCH_CUDA_ARCH_LIST" not in data["ambient_env"] and not data["differs"]


def test_diff_cuts_the_2_kb_nvidia_require_cuda(fleet):
    _, said = diff_text(fleet)
    whole = IMAGE_ENV["NVIDIA_REQUIRE_CUDA"]
    assert whole not in said and f"[{len(whole):,} chars, cut]" in said
    data = diff_json(fleet)
    assert data["cut_env"] == {"NVIDIA_REQUIRE_CUDA": len(whole)}
    assert len(data["ambient_env"]["NVIDIA_REQUIRE_CUDA"]) <= 160


def test_diff_env_rows_say_the_value_in_effect(fleet):
    lines, _ = diff_text(fleet)
    row = next(x for x in lines if " CUDA_VISIBLE_DEVICES " in x)
    cells = [cell.strip() for cell in row.strip("│┃| ").split("│")]
    assert cells[1:5] == ["0", "0", "0", "same"], row  # profile, running, resolved, state


def test_status_json_cuts_the_long_value_but_keeps_its_key(fleet):
    done = cli("status", "-c", str(fleet.config_path), "--json")
    [server] = json.loads(done.stdout)["hosts"]["img"]["servers"]
    shown = server["env"]["NVIDIA_REQUIRE_CUDA"]
    whole = IMAGE_ENV["NVIDIA_REQUIRE_CUDA"]
    assert len(shown) <= 160 and f"[{len(whole):,} chars, cut]" in shown
    assert server["env"]["TORCH_CUDA_ARCH_LIST"] == "9.0a"
