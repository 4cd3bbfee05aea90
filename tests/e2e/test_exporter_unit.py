"""The systemd unit the README gives for `sglconsole exporter` is the one that works: systemd's own
verifier accepts it, and its ExecStart line, run as written (only the paths and ports of this
machine put in), serves /metrics and /status and stops cleanly on systemd's SIGTERM."""

from __future__ import annotations

import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

from tests.prometheus import free_port

README = Path(__file__).resolve().parents[2] / "README.md"
SCRIPT = Path(sys.executable).with_name("sglconsole")  # what pip installed, like /opt/... in it

pytestmark = pytest.mark.slow


def readme_unit() -> str:
    text = README.read_text()
    found = re.search(r"```ini\n(\[Unit\].*?)```", text[text.index("A systemd unit") :], re.S)
    assert found, "the README's exporter unit is gone"
    return found.group(1)


def unit_lines(unit: str, key: str) -> list[str]:
    return [line.split("=", 1)[1] for line in unit.splitlines() if line.startswith(f"{key}=")]


@pytest.mark.skipif(shutil.which("systemd-analyze") is None, reason="no systemd-analyze here")
def test_systemd_accepts_the_readme_unit(tmp_path):
    unit = readme_unit()
    [exec_start] = unit_lines(unit, "ExecStart")
    here = unit.replace(shlex.split(exec_start)[0], str(SCRIPT))
    path = tmp_path / "sglconsole-exporter.service"
    path.write_text(here)
    done = subprocess.run(
        ["systemd-analyze", "verify", "--man=no", str(path)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    # unknown keys and bad values are only warnings to systemd: any line about the file fails
    complaints = [line for line in done.stderr.splitlines() if path.name in line]
    assert done.returncode == 0 and not complaints, done.stderr


def test_the_readme_units_command_runs_as_written(demo_fleet, tmp_path):
    unit = readme_unit()
    [exec_start] = unit_lines(unit, "ExecStart")
    argv = shlex.split(exec_start)
    assert argv[1] == "exporter"
    options = dict(zip(argv[2::2], argv[3::2], strict=True))
    assert set(options) == {"-c", "--listen", "--webhook"}, argv  # what is replaced below
    nobody = f"http://127.0.0.1:{free_port()}"  # Alertmanager down: the exporter carries on
    options.update({"-c": str(demo_fleet.config_path), "--listen": "127.0.0.1:0"})
    options["--webhook"] = nobody
    env = dict(os.environ)
    for assignment in unit_lines(unit, "Environment"):
        key, _, _ = assignment.partition("=")
        env[key] = str(tmp_path / key.lower())  # the unit's StateDirectory, here
    log = tmp_path / "exporter.log"
    process = subprocess.Popen(
        [str(SCRIPT), "exporter", *(x for pair in options.items() for x in pair)],
        stdout=subprocess.DEVNULL,
        stderr=log.open("w"),
        env=env,
    )
    try:
        url = None
        deadline = time.monotonic() + 60
        while url is None:
            assert process.poll() is None, log.read_text()
            assert time.monotonic() < deadline, log.read_text()
            found = re.search(r"serving (http://127\.0\.0\.1:\d+)/metrics", log.read_text())
            url = found.group(1) if found else None
            time.sleep(0.1)
        deadline = time.monotonic() + 60
        while 'sglconsole_host_up{host="h200x4"} 1.0' not in httpx.get(url + "/metrics").text:
            assert time.monotonic() < deadline, log.read_text()
            time.sleep(0.5)
        status = httpx.get(url + "/status", timeout=10)
        assert status.status_code == 200 and "h200x4" in status.json()["hosts"]
    finally:
        process.send_signal(signal.SIGTERM)  # what `systemctl stop` sends
        code = process.wait(timeout=30)
    assert code == 0, log.read_text()  # Restart=on-failure: a stop must not look like a failure
