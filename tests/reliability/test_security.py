"""Security: host keys, secrets never shown or logged, least surprise (dry runs)."""

from __future__ import annotations

import json
import subprocess

import yaml

from sglconsole.actions.audit import state_dir
from tests.cli import cli as run_cli
from tests.e2e.test_actions import cmdline_of_port, ct129, fleet_profile_args, with_profiles

SECRET_KEY = "sk-live-0123456789"
SECRET_TOKEN = "hf_supersecret"


def cli(*args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    return run_cli(*args, env=env, columns=250)


def test_known_hosts_none_is_warned_about_on_every_run(sshd, tmp_path):
    entry = sshd.host_entry(known_hosts="none")
    path = tmp_path / "hosts.yaml"
    path.write_text(yaml.safe_dump({"hosts": {"lab": entry}}))
    for _ in range(2):
        result = cli("run", "lab", "-c", str(path), "--", "echo", "hi")
        assert result.returncode == 0 and result.stdout.strip() == "hi"
        assert "host key checking is disabled" in result.stderr
    assert "host key checking is disabled" in cli("check", "-c", str(path)).stderr


def test_secrets_are_masked_everywhere_they_are_shown_or_logged(
    fleet_factory, tmp_path, monkeypatch
):
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    fleet = fleet_factory([ct129()])
    args = [*fleet_profile_args(fleet), "--api-key", "${SGLANG_API_KEY}"]
    path = with_profiles(
        fleet.config_path,
        {"keyed": {"args": args, "env": {"SGLANG_ENABLE_SPEC_V2": "1", "HF_TOKEN": "${HF_TOKEN}"}}},
        server_profile="keyed",
    )
    env = {"SGLANG_API_KEY": SECRET_KEY, "HF_TOKEN": SECRET_TOKEN}
    assert SECRET_KEY not in path.read_text()  # hosts.yaml holds references, never values
    launched = cli("relaunch", "-c", str(path), "ct129:30000", "--yes", env=env)
    assert launched.returncode == 0, launched.stdout + launched.stderr
    assert SECRET_KEY in cmdline_of_port(fleet.config_path)[1]  # the server really got it
    outputs = {
        "relaunch": launched.stdout + launched.stderr,
        "status": cli("status", "-c", str(path), "--json", env=env).stdout,
        "diff": cli("diff", "-c", str(path), "ct129:30000", env=env).stdout,
        "diff --json": cli("diff", "-c", str(path), "ct129:30000", "--json", env=env).stdout,
        "kill plan": cli("kill", "-c", str(path), "ct129:30000", "--dry-run", env=env).stdout,
    }
    assert "****" in outputs["status"]
    killed = cli("kill", "-c", str(path), "ct129:30000", "--yes", env=env)
    assert killed.returncode == 0, killed.stdout
    audit = (state_dir() / "actions.jsonl").read_text()
    outputs["audit"] = audit
    for name, text in outputs.items():
        assert SECRET_KEY not in text and SECRET_TOKEN not in text, f"a secret leaked into {name}"
    rollback = state_dir() / "rollback" / "ct129_30000.json"
    assert SECRET_KEY in rollback.read_text()  # rollback must relaunch exactly: kept, but private
    for private in (rollback, state_dir() / "actions.jsonl"):
        assert private.stat().st_mode & 0o777 == 0o600


def test_global_dry_run_prints_the_exact_commands_and_changes_nothing(
    fleet_factory, tmp_path, monkeypatch
):
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    fleet = fleet_factory([ct129()])
    before = cmdline_of_port(fleet.config_path)
    result = cli("--dry-run", "kill", "-c", str(fleet.config_path), "ct129:30000")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "these remote commands would run" in result.stdout and '"start_ticks"' in result.stdout
    assert cmdline_of_port(fleet.config_path) == before
    relaunch = cli("--dry-run", "relaunch", "-c", str(fleet.config_path), "ct129:30000", "--json")
    data = json.loads(relaunch.stdout)
    assert data["ok"] and cmdline_of_port(fleet.config_path) == before
