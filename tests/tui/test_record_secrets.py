"""`--record FILE` on a live fleet: secrets are masked as in every other output; the file is
0600."""

from __future__ import annotations

import json
import stat

from sglconsole import config
from sglconsole.sim.fleet.scenarios import QWEN8B, demo_profiles
from sglconsole.sim.fleet.start import HostSpec, ServerSpec
from sglconsole.tui.app import make_app
from tests.tui.helpers import until

SECRET_ARGS = [*QWEN8B, "--port", "30000", "--api-key", "sk-secret"]


async def test_a_recording_masks_secrets_and_is_private(fleet_factory, tmp_path):
    profiles = {
        **demo_profiles(),
        "secret-8b": {"args": SECRET_ARGS, "env": {"HF_TOKEN": "hf_secret"}},
    }
    host = HostSpec(
        name="gpu1",
        gpu_model="H200",
        gpu_count=1,
        models=("Qwen3-8B",),
        sglang={"startup_s": 0.5, "load": {"concurrency": 1, "max_tokens": 200}},
        servers=[
            ServerSpec(
                30000, "secret-8b", [0], running=SECRET_ARGS, running_env={"HF_TOKEN": "hf_secret"}
            )
        ],
    )
    fleet = fleet_factory([host], profiles)
    assert "sk-secret" in fleet.config_path.read_text()  # the profile holds both secrets
    assert "hf_secret" in fleet.config_path.read_text()
    path = tmp_path / "session.jsonl"
    app = make_app(config.load(fleet.config_path), record=path)
    async with app.run_test(size=(100, 30)) as pilot:
        server = lambda: app.session.fleet.server("gpu1", 30000)  # noqa: E731
        await until(pilot, lambda: server() and server().process, 30, "the server's process")
        await until(
            pilot,
            lambda: any("server_args=" in line for line in server().log_lines),
            30,
            "the server's startup line (its server_args)",
        )
        await pilot.pause(1.0)
    text = path.read_text()
    events = [json.loads(line) for line in text.splitlines()]
    assert events[0]["kind"] == "header"
    profile = events[0]["config"]["profiles"]["secret-8b"]
    assert profile["args"][-2:] == ["--api-key", "****"] and profile["env"]["HF_TOKEN"] == "****"
    assert any(e["kind"] == "log" for e in events)  # the log (SGLang prints api_key) was recorded
    assert "sk-secret" not in text and "hf_secret" not in text
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
