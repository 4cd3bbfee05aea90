"""Ctrl-C on `restore` once the launch is done: the new server keeps starting, and the operator
and the audit log are told so, with what to run next (#31 item 9)."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time

from sglconsole.actions.audit import AuditLog
from tests.e2e.test_actions import ct129, state_dir  # noqa: F401  (fixture)


def test_ctrl_c_after_the_launch_says_the_pid_keeps_starting_and_what_to_run(
    fleet_factory,
    state_dir,  # noqa: F811
):
    fleet = fleet_factory([ct129(startup_s=8.0)])
    command = [sys.executable, "-m", "sglconsole", "restore", "-c", str(fleet.config_path)]
    child = subprocess.Popen(
        [*command, "ct129:30000", "--yes"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "COLUMNS": "200", "PYTHONUNBUFFERED": "1"},
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    seen = []
    deadline = time.monotonic() + 90
    while time.monotonic() < deadline:
        line = child.stdout.readline()
        assert line, "".join(seen) + child.stderr.read()
        seen.append(line)
        if line.startswith("OK") and " launch " in line:
            break
    launched = re.search(r"launch \([\d.]+s\): pid (\d+)", "".join(seen))
    assert launched, "".join(seen)
    pid = launched.group(1)
    time.sleep(1.0)  # in the startup stage now: the server needs 8 s to be ready
    child.send_signal(signal.SIGINT)
    out, err = child.communicate(timeout=60)
    assert child.returncode == 130, out + err
    said = " ".join(err.split())
    assert f"pid {pid} keeps starting, detached and unprobed" in said, err
    assert "sglconsole probe ct129:30000" in said and "sglconsole status" in said, err
    restores = [r for r in AuditLog(state_dir / "sglconsole" / "actions.jsonl").actions()]
    assert [(r["action"], r["phase"], r["ok"]) for r in restores] == [("restore", "end", False)]
    outcome = restores[-1]["outcome"]
    assert outcome.startswith("interrupted after the launch: ") and f"pid {pid} keeps" in outcome
    assert "sglconsole probe ct129:30000" in outcome and restores[-1]["interrupted"] is True
