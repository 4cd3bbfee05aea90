"""The spec preflight checks is the spec that launches: ${VAR} is read from the operator's
environment once, so a change after that (here: while the action runs) reaches neither."""

from __future__ import annotations

import asyncio

import pytest
import yaml

from sglconsole import config
from sglconsole.actions import ActionContext, StageState, relaunch
from sglconsole.remote.ssh.connection import SshFleet
from tests.e2e.test_actions import cmdline_of_port, ct129, host_run, state_dir  # noqa: F401


@pytest.mark.usefixtures("state_dir")
def test_preflight_checks_the_very_argv_and_env_that_launch(fleet_factory, monkeypatch):
    fleet = fleet_factory([ct129()])
    data = yaml.safe_load(fleet.config_path.read_text())
    profile = data["profiles"]["qwen27b-tp2-mtp"]
    model = profile["args"].index("--model-path") + 1
    assert profile["args"][model] == "/srv/models/Qwen3.6-27B"
    profile["args"][model] = "${SGLC_MODELS}/Qwen3.6-27B"
    profile["env"] = {**profile.get("env", {}), "SGLC_TAG": "${SGLC_TAG}"}
    path = fleet.config_path.with_name("hosts-env.yaml")
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    monkeypatch.setenv("SGLC_MODELS", "/srv/models")
    monkeypatch.setenv("SGLC_TAG", "first")

    def environment_changes_once_the_action_runs(stage) -> None:
        if stage.name == "inspect" and stage.state == StageState.RUNNING:
            monkeypatch.setenv("SGLC_MODELS", "/nowhere")
            monkeypatch.setenv("SGLC_TAG", "second")

    async def run():
        cfg = config.load(path)
        ssh = SshFleet(cfg.hosts)
        ctx = ActionContext(cfg, ssh, progress=environment_changes_once_the_action_runs)
        try:
            return await relaunch(ctx, "ct129", 30000)
        finally:
            await ssh.close()

    result = asyncio.run(run())
    assert result.ok, result.summary
    (preflight,) = [s for s in result.stages if s.name == "preflight"]
    assert "ok   model: /srv/models/Qwen3.6-27B exists" in preflight.evidence, preflight.evidence
    pid, argv = cmdline_of_port(path)
    assert argv[argv.index("--model-path") + 1] == "/srv/models/Qwen3.6-27B"
    environ = asyncio.run(host_run(path, ["cat", f"/proc/{pid}/environ"])).split("\0")
    assert "SGLC_TAG=first" in environ, environ
