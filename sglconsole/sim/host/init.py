"""PID 1 of a simulated host's namespaces: bring up lo, run hostd, reap orphans.

Orphans (e.g. SGLang children that outlive their server) reparent to the
namespace's PID 1, as on a real host they reparent to init; this process
reaps them once they exit. When hostd ends (or we get SIGTERM), we exit and
the kernel kills every process left in the PID namespace: nothing leaks.
"""

from __future__ import annotations

import fcntl
import os
import signal
import socket
import struct
import subprocess
import sys

SIOCGIFFLAGS, SIOCSIFFLAGS, IFF_UP = 0x8913, 0x8914, 0x1


def bring_up_loopback() -> None:
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
        request = struct.pack("16sh", b"lo", 0)
        flags = struct.unpack("16sh", fcntl.ioctl(sock, SIOCGIFFLAGS, request))[1]
        fcntl.ioctl(sock, SIOCSIFFLAGS, struct.pack("16sh", b"lo", flags | IFF_UP))


def lay_out(root: str, target: str) -> None:
    """Show the host's files at realistic, identical paths on every host (target/ml-env, ...).

    Only this host's private mount namespace sees the tmpfs and the binds.
    """
    subprocess.run(["mount", "-t", "tmpfs", "sglsim", target], check=True)
    for name, source in LAYOUT.items():
        os.makedirs(os.path.join(target, name), exist_ok=True)
        subprocess.run(
            ["mount", "--bind", os.path.join(root, source), os.path.join(target, name)], check=True
        )


LAYOUT = {"ml-env": "env", "models": "models", "logs": "logs", "bin": "bin"}


def own_etc(root: str) -> None:
    """This host's own /etc: the machine's /etc under an overlay whose writes land in ROOT/etc
    (where the fleet also puts the host's own files, e.g. a systemd unit), so `cat > /etc/...`
    on a simulated host never reaches the operator's machine. Where overlayfs is refused, a
    copy of /etc, bound over it, is the host's."""
    upper, work = os.path.join(root, "etc"), os.path.join(root, "sim", "etc-work")
    os.makedirs(upper, exist_ok=True)
    os.makedirs(work, exist_ok=True)
    held = _hold_mounts_under("/etc")  # e.g. a container's /etc/hosts: the overlay would hide it
    options = f"lowerdir=/etc,upperdir={upper},workdir={work}"
    overlay = subprocess.run(
        ["mount", "-t", "overlay", "sglsim-etc", "-o", options, "/etc"], capture_output=True
    )
    if overlay.returncode != 0:
        copy = os.path.join(root, "sim", "etc-copy")
        # unreadable files (a real /etc/shadow under a user namespace) are left out: cp's
        # complaints are not the host's business
        subprocess.run(["cp", "-a", "/etc/.", copy], capture_output=True)
        subprocess.run(["cp", "-a", upper + "/.", copy], check=True)
        subprocess.run(["mount", "--bind", copy, "/etc"], check=True)
    for path, descriptor in held.items():
        subprocess.run(
            ["mount", "--bind", f"/proc/{os.getpid()}/fd/{descriptor}", path],
            pass_fds=(descriptor,),
            capture_output=True,
        )
        os.close(descriptor)


def _hold_mounts_under(folder: str) -> dict[str, int]:
    """An O_PATH fd on each mount below `folder`, to bind it back once `folder` is covered."""
    held: dict[str, int] = {}
    try:
        with open("/proc/self/mountinfo") as file:
            points = [line.split()[4] for line in file]
    except OSError:
        return held
    for point in points:
        if point.startswith(folder + "/") and point not in held:
            try:
                held[point] = os.open(point, os.O_PATH)
            except OSError:
                pass
    return held


def own_meminfo(root: str) -> None:
    """This host's own /proc/meminfo: ROOT/sim/meminfo bound over it (sim/host/signs.py keeps
    it, a leak included); where the bind is refused, the machine's own shows."""
    from sglconsole.sim.host.signs import meminfo_path, write_meminfo

    write_meminfo(root)
    bound = subprocess.run(
        ["mount", "--bind", meminfo_path(root), "/proc/meminfo"], capture_output=True, text=True
    )
    if bound.returncode != 0:
        print(
            f"sglsim init: /proc/meminfo is the machine's: {bound.stderr.strip()}", file=sys.stderr
        )


def give_root_shell(root: str, shell: str) -> None:
    """root's login shell on this host only: a copy of /etc/passwd bound over it in the host's
    private mount namespace (sshd reads the user's shell there, as on any machine)."""
    lines = []
    with open("/etc/passwd") as file:
        for line in file.read().splitlines():
            fields = line.split(":")
            if len(fields) == 7 and fields[0] == "root":
                fields[6] = shell
            lines.append(":".join(fields))
    copy = os.path.join(root, "sim", "passwd")
    with open(copy, "w") as file:
        file.write("\n".join(lines) + "\n")
    os.chmod(copy, 0o644)
    subprocess.run(["mount", "--bind", copy, "/etc/passwd"], check=True)


def main(argv: list[str]) -> int:
    if os.getpid() == 1:
        try:
            bring_up_loopback()
        except OSError as exc:
            print(f"sglsim init: cannot bring up lo: {exc}", file=sys.stderr)
    if "--layout" in argv:
        index = argv.index("--layout")
        target = argv[index + 1]
        del argv[index : index + 2]
        lay_out(argv[argv.index("--root") + 1], target)
    if os.getpid() == 1:  # only in the host's own mount namespace
        own_etc(argv[argv.index("--root") + 1])
        own_meminfo(argv[argv.index("--root") + 1])
    if "--login-shell" in argv and os.getpid() == 1:  # only in the host's own namespaces
        give_root_shell(argv[argv.index("--root") + 1], argv[argv.index("--login-shell") + 1])
    child = subprocess.Popen(
        [sys.executable, "-m", "sglconsole.sim.host.hostd", *argv], pass_fds=_inherited_fds(argv)
    )
    signal.signal(signal.SIGTERM, lambda *_: child.terminate())
    signal.signal(signal.SIGINT, lambda *_: child.terminate())
    while True:
        try:
            pid, status = os.wait()
        except ChildProcessError:
            return 0
        except InterruptedError:
            continue
        if pid == child.pid:
            return os.waitstatus_to_exitcode(status)


def _inherited_fds(argv: list[str]) -> tuple[int, ...]:
    return tuple(
        int(argv[index + 1]) for index, arg in enumerate(argv[:-1]) if arg == "--listen-fd"
    )


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
