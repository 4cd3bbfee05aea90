"""The console in a real terminal (a tmux pane): its input thread sleeps until a key comes
(Textual's own wakes ten times a second, typed or not: 0.18% of a core of an idle console's 1.2%),
and keys still arrive — a lone Esc too, which only the parser's timeout tells from the start of a
sequence — and q still quits."""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.sshd import free_port

TMUX = shutil.which("tmux")
pytestmark = pytest.mark.skipif(TMUX is None, reason="no tmux")
SWITCHES = re.compile(r"^voluntary_ctxt_switches:\s+(\d+)", re.MULTILINE)


def _switches(pid: int) -> dict[int, int]:
    """Voluntary context switches of each thread of PID but its first: how often each woke."""
    found = {}
    for tid in map(int, os.listdir(f"/proc/{pid}/task")):
        if tid == pid:
            continue
        try:
            status = Path(f"/proc/{pid}/task/{tid}/status").read_text()
        except OSError:  # a thread that ended in between
            continue
        found[tid] = int(SWITCHES.search(status).group(1))
    return found


def _screen(tmux: list[str]) -> str:
    return subprocess.run(
        [*tmux, "capture-pane", "-p"], capture_output=True, text=True, check=False
    ).stdout


def _until(what, timeout: float = 30.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if what():
            return True
        time.sleep(0.2)
    return False


def test_the_input_thread_sleeps_until_a_key_and_keys_and_a_lone_esc_arrive(tmp_path):
    # a host nobody answers (a closed loopback port): the console runs, retries and redraws
    hosts = tmp_path / "hosts.yaml"
    hosts.write_text(
        f"hosts:\n  nobody:\n    address: 127.0.0.1\n    port: {free_port('127.0.0.1')}\n"
        "    connect_timeout: 2\n"
    )
    console = [sys.executable, "-m", "sglconsole", "-c", str(hosts)]
    tmux = [TMUX, "-L", f"sglconsole-input-{os.getpid()}", "-f", "/dev/null"]
    env = [f"-e{key}={os.environ[key]}" for key in ("PYTHONPATH",) if key in os.environ]
    started = subprocess.run(
        [*tmux, "new-session", "-d", "-x", "120", "-y", "40", "-P", "-F", "#{pane_pid}", *env,
         "exec " + shlex.join(console)],
        capture_output=True, text=True, check=True, cwd=tmp_path,
    )  # fmt: skip
    pid = int(started.stdout)
    try:
        assert _until(lambda: "nobody" in _screen(tmux)), _screen(tmux)
        time.sleep(2)  # started: its threads are all there
        before, began = _switches(pid), time.monotonic()
        time.sleep(3)
        after, took = _switches(pid), time.monotonic() - began
        woke = {tid: (after[tid] - before.get(tid, 0)) / took for tid in after}
        # Textual's input thread: ten a second; the writer wakes once a redraw (the countdown)
        assert max(woke.values()) < 5, f"wakeups a second, by thread: {woke}"

        subprocess.run([*tmux, "send-keys", "?"], check=True)
        assert _until(lambda: "keys and statuses" in _screen(tmux)), _screen(tmux)
        subprocess.run([*tmux, "send-keys", "Escape"], check=True)  # alone: the timeout says so
        assert _until(lambda: "keys and statuses" not in _screen(tmux)), _screen(tmux)
        subprocess.run([*tmux, "send-keys", "q"], check=True)
        assert _until(lambda: not Path(f"/proc/{pid}").exists() or _zombie(pid), 15), (
            "q did not end the console"
        )
    finally:
        subprocess.run([*tmux, "kill-server"], capture_output=True, check=False)


def _zombie(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] == "Z"
    except OSError:
        return True
