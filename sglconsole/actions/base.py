"""What every action shares: its context, its stages, its result.

An action (kill, relaunch, restore, probe, rollback, capture) is an async
function ``action(ctx, host, port, ...) -> ActionResult``. It reports each
stage through ``ctx.progress`` as it starts and ends, writes an audit record
before it changes a host, and ends in a clear success or failure carrying
the evidence (log lines, exit codes). The CLI prints the stages; the TUI
streams them into a progress panel.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Awaitable, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from enum import StrEnum

from sglconsole.config import Config
from sglconsole.config.launch_spec import LaunchSpec
from sglconsole.core.deadline import cancel_all
from sglconsole.core.secrets import mask_argv, mask_env
from sglconsole.errors import ActionError
from sglconsole.remote.ssh.connection import SshFleet


class StageState(StrEnum):
    RUNNING = "running"
    OK = "ok"
    FAILED = "failed"
    SKIPPED = "skipped"


@dataclass
class Stage:
    name: str
    state: StageState = StageState.RUNNING
    detail: str = ""
    started: float = field(default_factory=time.monotonic)
    duration: float | None = None
    evidence: list[str] = field(default_factory=list)

    def line(self) -> str:
        took = f" ({self.duration:.1f}s)" if self.duration is not None else ""
        detail = ": " + self.detail if self.detail else ""
        return f"{self.state.value.upper():7} {self.name}{took}{detail}"


Progress = Callable[[Stage], None]


@dataclass
class ActionResult:
    action: str
    target: str
    ok: bool
    summary: str
    stages: list[Stage] = field(default_factory=list)
    evidence: list[str] = field(default_factory=list)
    data: dict = field(default_factory=dict)


@dataclass
class Plan:
    """Exactly what an action will do, for a confirmation to show before anything happens."""

    action: str
    target: str
    lines: list[str]
    argv: list[str] | None = None
    destructive: bool = True
    spec: LaunchSpec | None = None
    """What a launching action will start: the run is given this same spec."""
    warnings: list[str] = field(default_factory=list)
    """What the console already knows against doing it (sglconsole.actions.caveats): shown
    first."""
    prepared: object | None = None
    """What else the run is given, as it was shown (the upgrade's translation and commands)."""


def masked_argv(argv: list[str]) -> list[str]:
    out = []
    for arg in mask_argv(argv):
        if arg.startswith("{"):
            try:
                arg = json.dumps(_mask_json(json.loads(arg)))
            except ValueError:
                pass
        out.append(arg)
    return out


def _mask_json(value):
    if isinstance(value, dict):
        return {
            key: (
                mask_env(item)
                if key.endswith("env") and isinstance(item, dict)
                else _mask_json(item)
            )
            for key, item in value.items()
        }
    if isinstance(value, list):
        return (
            mask_argv([str(item) for item in value])
            if all(isinstance(item, str) for item in value)
            else [_mask_json(item) for item in value]
        )
    return value


def helper_named(arg: str) -> str:
    """A host helper's source (a `python -c` argument) as its docstring's first line."""
    if "\n" not in arg or len(arg) < 200:
        return arg
    lines = arg.strip().splitlines()
    first = lines[0].strip().strip('"').strip() or "python helper"
    return f"<{first} ({len(lines)} lines of Python; -v prints them)>"


@asynccontextmanager
async def started_early(*coroutines: Awaitable | None):
    """Each coroutine started now as a task, for a later stage to await: read-only asks of a
    host that need not wait for the ones before them. On leaving, those never awaited are
    cancelled (and every outcome is collected: none is left unretrieved)."""
    tasks = [
        None if coroutine is None else asyncio.ensure_future(coroutine) for coroutine in coroutines
    ]
    try:
        yield tasks
    finally:
        await cancel_all(task for task in tasks if task is not None)


class Interrupted(asyncio.CancelledError):
    """A cancel (Ctrl-C, a quit) that came after the action changed the host: its message says
    what was left behind and what to run next."""


def left_unprobed(host: str, port: int, pid: int, doing: str) -> str:
    """What an action cut short after its launch leaves, and the next commands to run."""
    return (
        f"pid {pid} keeps {doing}, detached and unprobed (nothing stops it); next:"
        f" `sglconsole probe {host}:{port}` to judge it, `sglconsole status` to watch it"
    )


class StageFailed(ActionError):
    def __init__(self, message: str, evidence: list[str] | None = None, data: dict | None = None):
        super().__init__(message)
        self.evidence = evidence or []
        self.data = data or {}
        """What the action learned before it failed (its probe's verdict, the new pid): the
        server's state keeps it."""


@dataclass
class ActionContext:
    config: Config
    ssh: SshFleet
    progress: Progress = lambda stage: None  # noqa: E731
    dry_run: bool = False
    stages: list[Stage] = field(default_factory=list)
    commands: list[str] = field(default_factory=list)
    """With dry_run: the exact remote commands that would have run."""
    known_state: str | None = None
    """What this console saw of the server when the action began ('LOOPING, probe
    DEGENERATE'): the rollback store keeps it with what it saves."""
    commands_short: list[str] = field(default_factory=list)
    """The same, each host helper's source shown by its first line (`-v` prints the source)."""

    @asynccontextmanager
    async def stage(self, name: str, detail: str = ""):
        """Run a stage: reported as running, then ok, or failed with its evidence."""
        current = Stage(name, detail=detail)
        self.stages.append(current)
        self.progress(current)
        try:
            yield current
        except StageFailed as exc:
            self._end(current, StageState.FAILED, str(exc), exc.evidence)
            raise
        except Exception as exc:
            self._end(current, StageState.FAILED, str(exc) or type(exc).__name__)
            raise
        else:
            if current.state == StageState.RUNNING:
                self._end(current, StageState.OK, current.detail)

    def would_run(self, ssh, argv: list[str]) -> None:
        """Under --dry-run: note the exact remote command, secrets masked (JSON arguments too),
        and a short form with each host helper's source named, not printed."""
        masked = masked_argv(argv)
        self.commands.append(ssh.command(masked))
        self.commands_short.append(ssh.command([helper_named(arg) for arg in masked]))

    def fail(self, stage: Stage, detail: str) -> None:
        """End a stage as failed without raising: a wrong answer is a verdict, not an error."""
        self._end(stage, StageState.FAILED, detail)

    def skip(self, name: str, detail: str) -> None:
        stage = Stage(name, StageState.SKIPPED, detail, duration=0.0)
        self.stages.append(stage)
        self.progress(stage)

    def _end(
        self, stage: Stage, state: StageState, detail: str, evidence: list[str] | None = None
    ) -> None:
        stage.state = state
        stage.detail = detail
        stage.duration = time.monotonic() - stage.started
        if evidence:
            stage.evidence = evidence
        self.progress(stage)

    def result(self, action: str, target: str, passed: bool, summary: str, **data) -> ActionResult:
        evidence = [line for stage in self.stages for line in stage.evidence]
        return ActionResult(action, target, passed, summary, list(self.stages), evidence, data)
