"""A busy host's first process scan: the watcher agent says its compute-apps first and its
processes after the scan of /proc, which takes seconds on a host of many processes. A one-shot
`status` in between must wait for the scan, not say that every server is down (two fresh clones
once read "configured but not running" of a server that served all along)."""

from __future__ import annotations

import json
import sys

import pytest
import yaml

from sglconsole.sim.fleet.scenarios import QWEN8B, demo_profiles
from sglconsole.sim.fleet.start import HostSpec, ServerSpec, SimFleet
from tests.cli import cli
from tests.e2e.conftest import SSH_MODE

SCAN_S = 4.0  # the host's scan; its GPUs (another feed) answer well before

# The host's python, as a slow /proc makes it: every program runs as it would, but the watcher's
# process list leaves the host SCAN_S late (its compute-apps line does not wait).
SLOW_SCAN = """\
import json, subprocess, sys, time
child = subprocess.Popen([{python!r}, *sys.argv[1:]], stdout=subprocess.PIPE)
late = True
for line in child.stdout:
    try:
        kind = json.loads(line).get("t")
    except (ValueError, AttributeError):
        kind = None
    if kind == "procs" and late:
        time.sleep({delay!r})
        late = False
    sys.stdout.buffer.write(line)
    sys.stdout.buffer.flush()
sys.exit(child.wait())
"""


@pytest.fixture(scope="module")
def fleet(tmp_path_factory):
    server = ServerSpec(30000, "qwen8b-tp1", [0], running=QWEN8B)
    sim = SimFleet(
        tmp_path_factory.mktemp("firstscan"), [HostSpec("busy", servers=[server])],
        demo_profiles(), ssh=SSH_MODE,
    )  # fmt: skip
    sim.start()
    sim.wait_ready()
    yield sim
    sim.stop()


def slow_scan_config(fleet: SimFleet, tmp_path) -> str:
    document = yaml.safe_load(fleet.config_path.read_text())
    host = document["hosts"]["busy"]
    shim = tmp_path / "python3"
    shim.write_text(f"#!{sys.executable}\n" + SLOW_SCAN.format(python=host["python"], delay=SCAN_S))
    shim.chmod(0o755)
    host["python"] = str(shim)
    path = tmp_path / "hosts.yaml"
    path.write_text(yaml.safe_dump(document, sort_keys=False))
    return str(path)


def test_a_one_shot_status_waits_for_the_first_process_scan(fleet, tmp_path):
    done = cli("status", "-c", slow_scan_config(fleet, tmp_path), "--json")
    [server] = json.loads(done.stdout)["hosts"]["busy"]["servers"]
    assert server["status"] == "UP" and server["pid"] is not None, server
    assert server["argv"][1:3] == ["-m", "sglang.launch_server"]
    assert done.returncode == 0, done.stderr
