"""A simulated host has its own /etc: what an operator writes there through `sglconsole run`
stays on that host, and the demo's ct129 has a systemd unit that `capture --from-systemd` reads."""

from __future__ import annotations

import dataclasses
import os
import uuid
from pathlib import Path

import pytest
import yaml

from sglconsole.sim.fleet.scenarios import PROVEN_27B, demo_hosts
from tests.cli import cli


def demo_ct129():
    (host,) = [host for host in demo_hosts(startup_s=0.5) if host.name == "ct129"]
    return host


@pytest.mark.skipif(not os.path.isdir("/etc/systemd/system"), reason="no /etc/systemd/system here")
def test_a_write_to_etc_on_a_simulated_host_stays_on_that_host(fleet_factory):
    fleet = fleet_factory([demo_ct129()])
    assert fleet.namespaces, "this machine allows namespaces: the host must have its own /etc"
    unit = f"sglsim-leak-{uuid.uuid4().hex[:8]}.service"
    real = Path("/etc/systemd/system") / unit
    try:
        wrote = cli(
            "run", "ct129", "-c", str(fleet.config_path), "--",
            "sh", "-c", f"echo '[Service]' > /etc/systemd/system/{unit} && echo x > /etc/{unit}",
        )  # fmt: skip
        assert wrote.returncode == 0, wrote.stdout + wrote.stderr
        assert not real.exists() and not Path("/etc", unit).exists()  # the machine's /etc
        seen = cli("run", "ct129", "-c", str(fleet.config_path), "--", "cat", str(real))
        assert seen.returncode == 0 and seen.stdout == "[Service]\n"  # the host's own /etc
        assert (fleet.hosts["ct129"].root / "etc" / "systemd" / "system" / unit).exists()
        config = str(fleet.config_path)
        passwd = cli("run", "ct129", "-c", config, "--", "head", "-1", "/etc/passwd")
        assert passwd.stdout.startswith("root:")  # the rest of /etc is still the machine's
    finally:
        real.unlink(missing_ok=True)
        Path("/etc", unit).unlink(missing_ok=True)


@pytest.mark.parametrize("namespaces", [True, False], ids=["own-etc", "no-namespaces"])
def test_capture_from_the_demo_hosts_systemd_unit(fleet_factory, namespaces):
    # without namespaces the host's ports are this machine's: no server, so no clash with others
    host = demo_ct129() if namespaces else dataclasses.replace(demo_ct129(), servers=[])
    fleet = fleet_factory([host], namespaces=namespaces)
    if not namespaces:
        assert "/etc" in fleet.warning  # the single host says it shares this machine's /etc
    result = cli(
        "capture", "-c", str(fleet.config_path), "ct129",
        "--from-systemd", "sglang-30000.service", "--as", "from-unit",
    )  # fmt: skip
    assert result.returncode == 0, result.stdout + result.stderr
    profile = yaml.safe_load(fleet.config_path.read_text())["profiles"]["from-unit"]
    models = fleet.hosts["ct129"].seen("models")
    proven = [arg.replace("{models}", models) for arg in PROVEN_27B]
    port = proven.index("--port")
    del proven[port : port + 2]  # the port is the server entry's, not the profile's
    assert profile["args"] == proven
    assert profile["python"] == fleet.hosts["ct129"].python
    # the unit pins the GPUs only: 0.5.23 does not read SGLANG_ENABLE_SPEC_V2
    assert "SGLANG_ENABLE_SPEC_V2" not in (profile.get("env") or {})
