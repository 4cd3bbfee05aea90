"""Where an idle console's CPU goes: every event-loop callback of the process timed in the CPU time
of its thread (`time.thread_time`), by what it runs (a task: its coroutine; else the callback), and
optionally named functions (`--wrap MODULE:ATTR`, nested in what calls them). Exact counts, no
sampling: a sampler at 1-2% of a core sees a few hundred stacks a minute.

    python -m bench.loop_profile OUT SETTLE_S [--wrap MODULE:ATTR ...] -- sglconsole ARGS...

runs `sglconsole ARGS` (its own process: bench/idle_cost.py --profile starts it in a tmux pane) and
writes OUT (JSON) every few seconds from SETTLE_S on. `report(OUT)` prints it as a table.
"""

from __future__ import annotations

import argparse
import asyncio.events
import functools
import importlib
import json
import sys
import threading
import time
from collections import defaultdict
from pathlib import Path

WRITE_EVERY_S = 5.0
"""OUT is written this often, not only at exit: a console whose pane closes may not exit cleanly."""


class LoopProfile:
    """Per label: [calls, CPU seconds], counted from `start()` on."""

    def __init__(self) -> None:
        self.stats: dict[str, list] = defaultdict(lambda: [0, 0.0])
        self.began: float | None = None  # time.monotonic() at start()
        self._unpatch: list = []

    def start(self) -> None:
        self.stats.clear()
        self.began = time.monotonic()

    def count(self, label: str, cpu_s: float) -> None:
        if self.began is not None:
            entry = self.stats[label]
            entry[0] += 1
            entry[1] += cpu_s

    def install(self) -> None:
        """Time every asyncio callback (asyncio.events.Handle._run: tasks' steps too)."""
        run = asyncio.events.Handle._run
        profile = self

        def timed(handle):
            began = time.thread_time()
            try:
                return run(handle)
            finally:
                profile.count(label_of(handle._callback), time.thread_time() - began)

        asyncio.events.Handle._run = timed
        self._unpatch.append(lambda: setattr(asyncio.events.Handle, "_run", run))

    def wrap(self, spec: str) -> None:
        """Time a function or method named MODULE:ATTR (Class.method) wherever it is called
        through that name (a `from X import f` taken before this sees the original: name it
        where it is called, `importer:f`)."""
        owner, name, original = resolve(spec)
        attribute = spec.partition(":")[2]
        profile = self

        @functools.wraps(original)
        def timed(*args, **kwargs):
            began = time.thread_time()
            try:
                return original(*args, **kwargs)
            finally:
                profile.count(f"fn {attribute}", time.thread_time() - began)

        setattr(owner, name, timed)
        self._unpatch.append(lambda: setattr(owner, name, original))

    def uninstall(self) -> None:
        while self._unpatch:
            self._unpatch.pop()()

    def snapshot(self) -> dict:
        """{"seconds": since start(), "stats": {label: [calls, cpu_s]}}, or {} before start()."""
        if self.began is None:
            return {}
        return {
            "seconds": time.monotonic() - self.began,
            "stats": {label: list(entry) for label, entry in self.stats.items()},
        }


def resolve(spec: str) -> tuple[object, str, object]:
    """MODULE:ATTR (ATTR may be Class.method) -> (its owner, its name, what it is now); raises
    ValueError naming what is missing."""
    module, _, attribute = spec.partition(":")
    if not module or not attribute:
        raise ValueError(f"{spec!r}: expected MODULE:ATTR")
    try:
        owner = importlib.import_module(module)
    except ImportError as exc:
        raise ValueError(f"{spec!r}: no module {module} ({exc})") from None
    *path, name = attribute.split(".")
    try:
        for part in path:
            owner = getattr(owner, part)
        return owner, name, getattr(owner, name)
    except AttributeError:
        raise ValueError(f"{spec!r}: {module} has no {attribute}") from None


def label_of(callback) -> str:
    """A task's step: `task <its coroutine's qualified name>`; else `cb <module>.<name>`."""
    owner = getattr(callback, "__self__", None)
    if owner is not None and hasattr(owner, "get_coro"):
        coroutine = owner.get_coro()
        return "task " + (getattr(coroutine, "__qualname__", None) or type(coroutine).__name__)
    function = getattr(callback, "func", callback)  # functools.partial
    name = getattr(function, "__qualname__", None) or type(function).__name__
    return f"cb {getattr(function, '__module__', None) or '?'}.{name}"


def report(path: Path, top: int = 30) -> str:
    """OUT as a table, costliest first: % of a core, calls a second, CPU per call."""
    data = json.loads(path.read_text())
    seconds = data["seconds"]
    rows = sorted(data["stats"].items(), key=lambda item: -item[1][1])
    callbacks = sum(cpu for label, (_, cpu) in rows if not label.startswith("fn "))
    lines = [
        f"{seconds:.0f} s measured; event-loop callbacks: {callbacks / seconds * 100:.2f}% of a "
        "core (fn rows are inside them)",
        f"{'% core':>7} {'calls/s':>8} {'us/call':>8}  what",
    ]
    for label, (calls, cpu) in rows[:top]:
        lines.append(
            f"{cpu / seconds * 100:7.3f} {calls / seconds:8.1f} {cpu / max(calls, 1) * 1e6:8.0f}  "
            + label
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    split = argv.index("--") if "--" in argv else len(argv)
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("out", type=Path)
    parser.add_argument("settle", type=float)
    parser.add_argument("--wrap", nargs="*", default=[], metavar="MODULE:ATTR")
    args = parser.parse_args(argv[:split])
    profile = LoopProfile()
    profile.install()
    for spec in args.wrap:
        profile.wrap(spec)

    def write() -> None:
        found = profile.snapshot()
        if found:
            args.out.write_text(json.dumps(found))

    def writer() -> None:
        time.sleep(args.settle)
        profile.start()
        while True:
            time.sleep(WRITE_EVERY_S)
            write()

    threading.Thread(target=writer, daemon=True).start()
    from sglconsole.cli import main as console

    sys.argv = ["sglconsole", *argv[split + 1 :]]
    try:
        return console()
    finally:
        if not args.out.exists():  # else its shutdown is not counted as idle work
            write()


if __name__ == "__main__":
    raise SystemExit(main())
