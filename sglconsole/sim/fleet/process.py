"""A simulated host's process tree: started in its own namespaces, waited for, tied to us.

Each host is its own machine as far as anything on it can tell: its own PID,
network and mount namespaces (``unshare``). Its SSH server listens on a socket
bound outside, on the host's own loopback address, and inherited by fd.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

from sglconsole.sim.fleet.host import SimHost
from sglconsole.sim.host.root import PROJECT_ROOT

LAYOUT_CANDIDATES = ("/srv", "/mnt", "/opt")


def launch(host: SimHost) -> None:
    """Start the host's init (inside its namespaces when it has them)."""
    listen_fd = host.sock.fileno()
    command = [
        sys.executable,
        "-m",
        "sglconsole.sim.host.init",
        "--root",
        str(host.root),
        "--listen-fd",
        str(listen_fd),
        "--ssh",
        host.ssh_mode,
    ]
    if host.namespaced:
        # --kill-child: should unshare die (its owner was SIGKILLed), the host's PID 1 dies
        # with it, and with PID 1 every process of the host
        prefix = [
            "unshare",
            "--pid",
            "--net",
            "--mount",
            "--kill-child",
            "--mount-proc",
            "--propagation",
            "private",
        ]
        if os.geteuid() != 0:
            prefix[1:1] = ["--user", "--map-root-user"]
        command = prefix + command + (["--layout", host.layout] if host.layout else [])
    if host.spec.login_shell:
        command += ["--login-shell", host.spec.login_shell]
    log = open(host.root / "sim" / "hostd.log", "ab")  # noqa: SIM115
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join(
            filter(None, [str(PROJECT_ROOT), os.environ.get("PYTHONPATH")])
        ),
    }
    host.process = subprocess.Popen(
        command,
        pass_fds=(listen_fd,),
        stdin=subprocess.DEVNULL,
        stdout=log,
        stderr=log,
        start_new_session=True,
        env=env,
        preexec_fn=_die_with_owner(),
    )
    log.close()


def read_text(path: Path) -> str:
    try:
        return path.read_text(errors="replace")
    except OSError:
        return ""


def layout_dir(workdir: Path) -> str | None:
    """A folder the private mount namespace may cover with a tmpfs (it must hide nothing we
    need)."""
    needed = [PROJECT_ROOT, Path(sys.executable).resolve(), Path(sys.prefix), workdir, Path.home()]
    needed += [Path(getattr(sys, "_base_executable", sys.executable)).resolve()]
    for candidate in LAYOUT_CANDIDATES:
        if os.path.isdir(candidate) and not any(
            str(path).startswith(candidate + "/") for path in needed
        ):
            return candidate
    return None


def namespaces_work() -> bool:
    command = ["unshare", "--pid", "--net", "--mount", "--fork", "--mount-proc", "true"]
    if os.geteuid() != 0:
        command[1:1] = ["--user", "--map-root-user"]
    try:
        return subprocess.run(command, capture_output=True, timeout=10).returncode == 0
    except (OSError, subprocess.TimeoutExpired):
        return False


def wait_banner(host: SimHost, deadline: float) -> None:
    """Until the host's SSH server greets; raises with its hostd.log if it cannot."""
    while True:
        try:
            with socket.create_connection((host.address, host.port), timeout=1) as conn:
                # short: the listening socket is also ours, so a host whose SSH server died
                # still accepts the connection; only its silence and its exit tell
                conn.settimeout(0.5)
                if conn.recv(64).startswith(b"SSH-"):
                    return
        except OSError:
            pass
        if host.process and host.process.poll() is not None:
            raise RuntimeError(
                f"simulated host {host.spec.name} could not start SSH "
                f"(exit {host.process.returncode}): {_hostd_log(host)}"
            )
        if time.monotonic() > deadline:
            raise RuntimeError(
                f"simulated host {host.spec.name} did not start SSH in time "
                f"(still running): {_hostd_log(host)}"
            )
        time.sleep(0.05)


def _hostd_log(host: SimHost) -> str:
    text = read_text(host.root / "sim" / "hostd.log").strip()
    return text[-2000:] if text else "(hostd.log is empty)"


def _die_with_owner():
    """preexec_fn: the host gets SIGKILL when the thread that started it dies, even by SIGKILL.

    Only for the main thread: the kernel's parent-death signal follows the creating thread, and
    a worker thread that started a fleet may end long before the fleet should."""
    import threading

    if threading.current_thread() is not threading.main_thread():
        return None
    import ctypes

    libc = ctypes.CDLL(None, use_errno=True)
    owner = os.getpid()

    def arm() -> None:
        libc.prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
        if os.getppid() != owner:  # the owner died between fork and prctl
            os._exit(1)

    return arm
