"""The console's CLI, imported once and forked for each run (tests/cli.py): every run is still
its own process running `python -m sglconsole` from the top — its own argv, environment, working
directory, stdin, stdout and stderr, exit status — but the 0.3-0.6 s of CPU its imports take is
paid once per test worker, not 330 times a suite on a 2-core CI machine.

Run as `python -m tests.cli_fork FD`: FD is a Unix socket to the test worker. Each request on it
carries a JSON line and one file descriptor, a socket of that run's own: the pid is said on it
when the run starts, and its exit status (as subprocess reports it) when it ends.
"""

from __future__ import annotations

import array
import importlib
import json
import os
import pkgutil
import runpy
import select
import signal
import socket
import sys


def preimport() -> None:
    """What a CLI run imports before it parses its arguments: every command's module."""
    import sglconsole.cli
    import sglconsole.commands

    del sglconsole.cli
    for module in pkgutil.iter_modules(sglconsole.commands.__path__):
        importlib.import_module(f"sglconsole.commands.{module.name}")


def receive(control: socket.socket) -> tuple[dict, int] | None:
    """One request and its run's socket; None when the worker has gone."""
    fds = array.array("i")
    message, ancillary, _flags, _address = control.recvmsg(65536, socket.CMSG_SPACE(fds.itemsize))
    if not message:
        return None
    for level, kind, data in ancillary:
        if level == socket.SOL_SOCKET and kind == socket.SCM_RIGHTS:
            fds.frombytes(data[: len(data) - (len(data) % fds.itemsize)])
    return json.loads(message), fds[0]


def dump_tasks(number, frame) -> None:
    """SIGUSR1 (a run past its timeout, before its SIGKILL): what every thread and asyncio task
    waits on, to stderr, so a hang says where it hangs."""
    import asyncio
    import faulthandler

    print(f"--- {sys.argv} past its timeout: threads, then asyncio tasks ---", file=sys.stderr)
    faulthandler.dump_traceback(file=sys.stderr)
    loop = asyncio._get_running_loop()
    for task in asyncio.all_tasks(loop) if loop is not None else ():
        task.print_stack(file=sys.stderr)
    sys.stderr.flush()


def become(request: dict) -> None:
    """In the forked child: the process `python -m sglconsole ARGS` would be, then run it."""
    signal.set_wakeup_fd(-1)
    signal.signal(signal.SIGCHLD, signal.SIG_DFL)
    signal.signal(signal.SIGUSR1, dump_tasks)
    os.chdir(request["cwd"])
    for target, (path, flags) in enumerate(
        (
            (request["stdin"], os.O_RDONLY),
            (request["stdout"], os.O_WRONLY | os.O_TRUNC),
            (request["stderr"], os.O_WRONLY | os.O_TRUNC),
        )
    ):
        descriptor = os.open(path, flags)
        os.dup2(descriptor, target)
        os.close(descriptor)
    os.environ.clear()
    os.environ.update(request["env"])
    sys.argv = ["sglconsole", *request["args"]]
    runpy.run_module("sglconsole", run_name="__main__", alter_sys=True)


def serve(control: socket.socket) -> None:
    woken_r, woken_w = os.pipe()
    os.set_blocking(woken_w, False)
    signal.set_wakeup_fd(woken_w)
    signal.signal(signal.SIGCHLD, lambda number, frame: None)
    runs: dict[int, socket.socket] = {}
    while True:
        ready, _, _ = select.select([control, woken_r], [], [])
        if woken_r in ready:
            os.read(woken_r, 4096)
            reap(runs)
        if control not in ready:
            continue
        received = receive(control)
        if received is None:
            return
        request, descriptor = received
        reply = socket.socket(fileno=descriptor)
        pid = os.fork()
        if pid == 0:
            for other in (control, reply, *runs.values()):
                other.close()
            os.close(woken_r)
            os.close(woken_w)
            become(request)  # ends by SystemExit, as `python -m` does: atexit, flushes
            return
        runs[pid] = reply
        send(reply, {"pid": pid})
        reap(runs)


def reap(runs: dict[int, socket.socket]) -> None:
    for pid in list(runs):
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            reply = runs.pop(pid)
            send(reply, {"exit": os.waitstatus_to_exitcode(status)})
            reply.close()


def send(reply: socket.socket, message: dict) -> None:
    try:
        reply.sendall(json.dumps(message).encode() + b"\n")
    except OSError:
        pass  # the worker stopped waiting (a timeout killed the run)


def main() -> None:
    control = socket.socket(fileno=int(sys.argv[1]))
    preimport()
    serve(control)


if __name__ == "__main__":
    main()
