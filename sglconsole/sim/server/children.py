"""The processes a simulated server starts, named like SGLang's, and what they show nvidia-smi.

SGLang's schedulers (``sglang::scheduler_TP0``...) and detokenizer hold the GPU
memory; here each is a ``sglconsole.sim.server.child`` that reports the plan its parent
writes (see child.py).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

from sglconsole.sim import versiontable

TRUE = ("1", "true", "yes", "y", "on")  # SGLang's EnvBool


class ServerChildren:
    """The scheduler and detokenizer processes of one server (`settings`: the host's faults).

    With the release's Rust server on (SGLANG_RUST_SERVER=1, 0.5.17+) HTTP, tokenizer and
    detokenizer run as threads of the rank-0 scheduler: there is no detokenizer child."""

    def __init__(self, root: str, settings: dict, version: str):
        self.root = root
        self.settings = settings
        variable = versiontable.runtime_mode(version, "rust_server")
        self.rust_server = bool(variable) and os.environ.get(variable, "").lower() in TRUE
        self.processes: list[subprocess.Popen] = []

    def pids(self) -> set[int]:
        return {child.pid for child in self.processes}

    def spawn(self, gpus: list[int], tp_size: int) -> None:
        linger = bool(self.settings.get("linger_children"))
        titles = [
            f"sglang::scheduler_TP{rank}" if tp_size > 1 else "sglang::scheduler"
            for rank in range(tp_size)
        ]
        roles = [("scheduler", titles[rank], gpus[rank]) for rank in range(tp_size)]
        if not self.rust_server:
            roles.append(("detokenizer", "sglang::detokenizer", None))
        for role, title, gpu in roles:
            command = [
                sys.executable,
                "-m",
                "sglconsole.sim.server.child",
                "--title",
                title,
                "--root",
                self.root,
                "--parent",
                str(os.getpid()),
            ]
            if gpu is not None:
                command += ["--gpu", str(gpu)]
            if linger:
                command.append("--linger")
            command += ["--poll", str(self.settings.get("child_poll_s") or 0.5)]
            if role == "detokenizer" and self.settings.get("zombie_child"):
                command.append("--exit-early")
            if role == "scheduler" and gpu == gpus[0] and self.settings.get("jit_build"):
                command.append("--jit")
            self.processes.append(subprocess.Popen(command, stdin=subprocess.DEVNULL))

    def reap(self) -> None:
        if self.settings.get("zombie_child"):
            return  # the bug we simulate: an exited child nobody waits for
        for child in self.processes:
            child.poll()

    def stop(self, force: bool) -> None:
        if self.settings.get("linger_children") and not force:
            return  # they stay, holding GPU memory, reparented to init
        for child in self.processes:
            if child.poll() is None:
                child.terminate()


def write_plan(root: str, parent: int, update: dict) -> None:
    """What this server's children report to nvidia-smi (children read it; see child.py)."""
    path = os.path.join(root, "sim", "run", f"{parent}.json")
    os.makedirs(os.path.dirname(path), exist_ok=True)
    try:
        with open(path, encoding="utf-8") as file:
            plan = json.load(file)
    except (OSError, ValueError):
        plan = {}
    plan.update(update)
    tmp = f"{path}.tmp"
    with open(tmp, "w", encoding="utf-8") as file:
        json.dump(plan, file)
    os.replace(tmp, path)
