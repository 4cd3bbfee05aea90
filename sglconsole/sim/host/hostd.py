"""A simulated host's daemons: its SSH server and the servers running at "boot".

The SSH server listens on a socket created outside the host's namespaces (on
its own loopback address) and inherited by fd, so the console connects from
outside while every command, port forward and process lives inside:

* ``--ssh sshd``: OpenSSH, one ``sshd -i`` per accepted connection (needs root);
* ``--ssh asyncssh``: an asyncssh server (no root, no sshd needed; the demo).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import threading
from pathlib import Path

from sglconsole.sim.host.detach import start_detached
from sglconsole.sim.host.root import path_env
from sglconsole.sim.host.signs import keep_signs


def boot_servers(root: Path) -> None:
    """Start what an operator left running, detached like `setsid nohup ... > log &`
    (reparented to init)."""
    try:
        boot = json.loads((root / "sim" / "boot.json").read_text())
    except (OSError, ValueError):
        return
    for entry in boot:
        env = {"PATH": path_env(root), "HOME": str(root), **entry.get("env", {})}
        start_detached(entry["argv"], env=env, cwd=entry.get("cwd") or str(root), log=entry["log"])


def hang_up(pid: int) -> None:
    try:
        os.killpg(pid, signal.SIGHUP)
    except ProcessLookupError:
        pass


def session_env(root: Path, shell: str = "/bin/sh") -> dict[str, str]:
    return {
        "PATH": path_env(root),
        "HOME": str(root),
        "LANG": "C.UTF-8",
        "SHELL": shell,
        "USER": "root",
    }


# ------------------------------------------------------------------ OpenSSH


PRIVSEP_DIR = "/run/sshd"
"""Debian's sshd refuses to start without it; only an init system's unit creates it, so a machine
without one (a container, CI) never has it after `apt-get install openssh-server`."""


def sshd_binary() -> str:
    return shutil.which("sshd") or "/usr/sbin/sshd"


def prepare_sshd(config: str) -> None:
    """What sshd needs at run time, created idempotently; then sshd's own config test.

    Raises SystemExit with sshd's own words when it cannot start, so the host fails in
    about a second with the reason in hostd.log instead of refusing every connection."""
    os.makedirs(PRIVSEP_DIR, mode=0o755, exist_ok=True)
    test = subprocess.run(
        [sshd_binary(), "-t", "-f", config], capture_output=True, text=True, check=False
    )
    if test.returncode != 0:
        reason = (test.stderr or test.stdout).strip() or f"exit status {test.returncode}"
        print(f"sglsim hostd: sshd cannot start: {reason}", file=sys.stderr, flush=True)
        raise SystemExit(3)


async def serve_sshd(sock: socket.socket, config: str) -> None:
    prepare_sshd(config)
    sshd = sshd_binary()
    sock.setblocking(False)
    loop = asyncio.get_running_loop()
    children: set[subprocess.Popen] = set()
    while True:
        conn, _ = await loop.sock_accept(sock)
        conn.setblocking(True)
        # sshd's stderr is ours, i.e. hostd.log: a refused connection says why there
        children.add(
            subprocess.Popen([sshd, "-i", "-f", config], stdin=conn, stdout=conn, stderr=sys.stderr)
        )
        conn.close()
        for child in list(children):
            if child.poll() is not None:
                children.discard(child)


# ----------------------------------------------------------------- asyncssh


async def serve_asyncssh(sock: socket.socket, root: Path, shell: str = "/bin/sh") -> None:
    import asyncssh

    env = session_env(root, shell)
    if os.environ.get("SGLSIM_SSH_DEBUG"):
        import logging

        logging.basicConfig(level=logging.DEBUG, stream=sys.stderr)
        asyncssh.set_debug_level(2)

    class Server(asyncssh.SSHServer):
        def connection_requested(self, dest_host, dest_port, orig_host, orig_port):
            return True  # local port forwards to this host's servers

    async def handle(process: asyncssh.SSHServerProcess) -> None:
        command = process.command
        if command is None:
            process.stderr.write(b"this simulated host accepts commands only\n")
            process.exit(1)
            return
        proc = await asyncio.create_subprocess_exec(
            shell,  # the login shell splits the command, as sshd has it do
            "-c",
            command,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            env=env,
            cwd=str(root),
            start_new_session=True,
        )
        # pumped by hand: asyncssh's redirect() drops the whole connection when a pipe's EOF
        # reaches a channel the client already closed (KeyError in feed_eof)
        pumps = [
            asyncio.create_task(_pump(proc.stdout, process.stdout)),
            asyncio.create_task(_pump(proc.stderr, process.stderr)),
            asyncio.create_task(_feed(process.stdin, proc.stdin)),
        ]
        exited = asyncio.create_task(proc.wait())
        closed = asyncio.create_task(process.channel.wait_closed())
        await asyncio.wait({exited, closed}, return_when=asyncio.FIRST_COMPLETED)
        if not exited.done():
            hang_up(proc.pid)  # the client went away: like a closed session, not a kill
            try:
                await asyncio.wait_for(asyncio.shield(exited), 2.0)
            except TimeoutError:
                proc.kill()
        status = await exited
        await asyncio.wait(pumps[:2], timeout=2.0)  # the last output, before the exit status
        for task in (*pumps, closed):
            task.cancel()
        try:  # the client may have closed the channel already: nothing to report to
            process.exit(max(0, status) if status >= 0 else 128 - status)
        except (asyncssh.Error, OSError):
            pass

    ssh = root / "ssh"
    await asyncssh.listen(
        sock=sock,
        server_factory=Server,
        server_host_keys=[str(ssh / "host_ed25519")],
        authorized_client_keys=str(ssh / "authorized_keys"),
        process_factory=handle,
        encoding=None,
        allow_scp=False,
        keepalive_interval=5,
    )
    await asyncio.Event().wait()


async def _pump(source: asyncio.StreamReader, sink) -> None:
    try:
        while data := await source.read(65536):
            sink.write(data)
            await sink.drain()
    except (asyncssh_errors(), OSError, BrokenPipeError):
        pass


async def _feed(source, sink: asyncio.StreamWriter) -> None:
    try:
        while data := await source.read(65536):
            sink.write(data)
            await sink.drain()
    except (asyncssh_errors(), OSError, BrokenPipeError):
        pass
    finally:
        try:
            sink.close()  # EOF on the command's stdin: the channel's input ended
        except OSError:
            pass


def asyncssh_errors():
    import asyncssh

    return asyncssh.Error


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--root", required=True, type=Path)
    parser.add_argument("--listen-fd", type=int, required=True)
    parser.add_argument("--ssh", choices=("sshd", "asyncssh"), default="asyncssh")
    parser.add_argument("--login-shell", default="/bin/sh")
    args = parser.parse_args(argv)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    os.chdir(args.root)
    signs = threading.Thread(  # leaking memory and kernel log lines on demand (signs.py)
        target=keep_signs, args=(str(args.root), threading.Event()), daemon=True
    )
    signs.start()
    boot_servers(args.root)
    sock = socket.socket(fileno=args.listen_fd)
    if args.ssh == "sshd":
        coro = serve_sshd(sock, str(args.root / "ssh" / "sshd_config"))
    else:
        coro = serve_asyncssh(sock, args.root, args.login_shell)
    try:
        asyncio.run(coro)
    except KeyboardInterrupt:
        pass
    except SystemExit as exc:
        return exc.code if isinstance(exc.code, int) else 0
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
