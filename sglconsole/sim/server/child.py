"""A simulated SGLang child process (scheduler / detokenizer).

Renames itself like SGLang does (setproctitle rewrites /proc/PID/cmdline),
holds the GPU memory its parent's plan says, and exits when the parent goes —
unless the host simulates SGLang's known bug of children that linger,
reparented to PID 1, still holding GPU memory.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import time

from sglconsole.sim import gpustate, settings


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--title", required=True)
    parser.add_argument("--root", required=True)
    parser.add_argument("--parent", type=int, required=True)
    parser.add_argument("--gpu", type=int)
    parser.add_argument("--linger", action="store_true")
    parser.add_argument("--exit-early", action="store_true")
    parser.add_argument("--poll", type=float, default=0.5)
    parser.add_argument("--jit", action="store_true", help="run a JIT build (sim/server/jit.py)")
    args = parser.parse_args(argv)
    try:
        import setproctitle

        setproctitle.setproctitle(args.title)
    except ImportError:
        pass
    if args.exit_early:
        return 0
    signal.signal(signal.SIGTERM, lambda *_: _exit(args))
    if args.jit:
        command = [sys.executable, "-m", "sglconsole.sim.server.jit"]
        subprocess.Popen(command, stdin=subprocess.DEVNULL, start_new_session=True)
    plan_path = os.path.join(args.root, "sim", "run", f"{args.parent}.json")
    last = None
    leak = Leak(args.root, args.parent) if args.gpu is not None else None
    while True:
        if leak is not None:
            leak.step()
        orphaned = os.getppid() != args.parent
        if orphaned and not args.linger:
            _exit(args)
        if args.gpu is not None:
            plan = _read(plan_path)
            state = (plan.get("mem_mib", 0), 0 if orphaned else plan.get("util", 0))
            if state != last and state[0]:
                gpustate.register_gpu_use(
                    args.root, os.getpid(), [args.gpu], state[0], state[1], args.title
                )
                last = state
        time.sleep(args.poll)


class Leak:
    """A scheduler whose host memory leaks: its port's `leak_mib_s` (sglang settings, read live)
    is really allocated and touched, so its RSS grows as a leaking SGLang's does."""

    def __init__(self, root: str, parent: int):
        self.root = root
        self.port = _port_of(parent)
        self.hoard: list[bytearray] = []
        self.last = time.monotonic()

    def step(self) -> None:
        now, rate = time.monotonic(), 0.0
        try:
            rate = float(settings.server_settings(self.root, self.port).get("leak_mib_s") or 0)
        except (TypeError, ValueError):
            pass
        size = int(rate * (now - self.last) * (1 << 20))
        self.last = now
        if size > 0:
            self.hoard.append(bytearray(b"\x01") * size)  # written, so resident


def _port_of(parent: int) -> int:
    """The parent server's --port (SGLang's default 30000)."""
    try:
        with open(f"/proc/{parent}/cmdline", "rb") as file:
            argv = file.read().decode(errors="replace").split("\0")
        return int(argv[argv.index("--port") + 1])
    except (OSError, ValueError, IndexError):
        return 30000


def _read(path: str) -> dict:
    try:
        with open(path, encoding="utf-8") as file:
            return json.load(file)
    except (OSError, ValueError):
        return {}


def _exit(args) -> None:
    if args.gpu is not None:
        gpustate.unregister_gpu_use(args.root, os.getpid())
    sys.exit(0)


if __name__ == "__main__":
    raise SystemExit(main())
