"""Plan -> confirm -> run -> record, for every action the console can take on a server.

The flow is UI-agnostic: it talks to the screen through the small `Ui`
protocol, so it runs the same inside a Textual worker and in a test.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Protocol

from sglconsole import actions
from sglconsole.actions import ActionContext, ActionResult, Plan, StageFailed
from sglconsole.errors import ConsoleError
from sglconsole.state.fleet import FleetState
from sglconsole.tui.history import ActionRecord
from sglconsole.tui.session import Session

log = logging.getLogger(__name__)

Planner = Callable[[ActionContext, str, int], Awaitable[Plan]]
Runner = Callable[[ActionContext, str, int], Awaitable[ActionResult]]


@dataclass(frozen=True)
class Operation:
    name: str
    plan: Planner | None
    run: Runner
    doing: str | None = None
    """What the server shows as its status reason while this runs."""


async def plan_restore(ctx: ActionContext, host: str, port: int) -> Plan:
    plan = await actions.plan_relaunch(ctx, host, port)
    plan.action = "restore"
    plan.lines.append("then: wait for ready, probe, compare with the baseline")
    return plan


async def plan_rollback(ctx: ActionContext, host: str, port: int) -> Plan:
    return actions.plan_rollback(ctx, host, port)


BENCH_LEVELS = (1, 4, 16)


async def bench(ctx: ActionContext, host: str, port: int) -> ActionResult:
    """A quick sweep (1, 4, 16 concurrent requests); the summary holds the table and a tok/s chart."""
    from sglconsole.bench import SweepSettings, run_sweep

    result = await run_sweep(
        ctx, host, port, list(BENCH_LEVELS), settings=SweepSettings(output_len=128)
    )
    return ctx.result("bench", f"{host}:{port}", True, sweep_summary(result), sweep=result)


def sweep_summary(result) -> str:
    """tok/s against concurrency, as text the progress panel shows."""
    top = max((level.output_tok_s or 0.0 for level in result.levels), default=0.0) or 1.0
    lines = ["tok/s by concurrency (aggregate · per request · TTFT p50 · accept len)"]
    for level in result.levels:
        tok_s = level.output_tok_s or 0.0
        bar = "█" * max(1, round(24 * tok_s / top))
        accept = f" · {level.accept_len:.2f}" if level.accept_len else ""
        ttft = f" · {level.ttft_p50_ms:.0f} ms" if level.ttft_p50_ms is not None else ""
        per = (
            f" · {level.per_request_tok_s:.1f}" if getattr(level, "per_request_tok_s", None) else ""
        )
        lines.append(f"{level.concurrency:>4}  {bar:<24} {tok_s:7.1f}{per}{ttft}{accept}")
    lines += [f"note: {warning}" for warning in getattr(result, "warnings", [])][:3]
    return "\n".join(lines)


OPERATIONS = {
    "kill": Operation("kill", actions.plan_kill, actions.kill, "being stopped (kill)"),
    "relaunch": Operation(
        "relaunch", actions.plan_relaunch, actions.relaunch, "relaunching the proven profile"
    ),
    "restore": Operation("restore", plan_restore, actions.restore, "restoring the proven profile"),
    "rollback": Operation("rollback", plan_rollback, actions.rollback, "rolling back"),
    "probe": Operation("probe", None, actions.probe),
    "bench": Operation("bench", None, bench, "being benchmarked"),
}


def capture(name: str, force: bool = False) -> Operation | None:
    """The capture action, when this version of the actions package has it."""
    run = getattr(actions, "capture", None)
    if run is None:
        return None
    return Operation(
        "capture", None, lambda ctx, host, port: run(ctx, host, port, name, force=force)
    )


def replace_profile_plan(name: str, target: str, path: object) -> Plan:
    return Plan(
        "replace profile",
        name,
        [
            f"profile {name!r} already exists in {path}",
            f"it will be replaced by the config that runs on {target}",
        ],
    )


class Ui(Protocol):
    async def confirm(self, plan: Plan) -> bool: ...
    def progress(self, record: ActionRecord) -> None: ...
    def finished(self, record: ActionRecord) -> None: ...
    def refused(self, message: str) -> None: ...


async def perform(
    op: Operation, host: str, port: int, session: Session, ui: Ui
) -> ActionRecord | None:
    """Run one action end to end; None when it was refused or cancelled (nothing changed)."""
    record = ActionRecord(op.name, f"{host}:{port}", session.clock())
    ctx = session.context(lambda stage: (record.stage(stage), ui.progress(record)))
    if op.plan is not None and not await _agreed(op, ctx, host, port, ui):
        return None
    session.history.append(record)
    ui.progress(record)
    with doing(session.fleet, host, port, op.doing):
        result = await _run(op, ctx, host, port)
    record.finish(result.ok, result.summary, result.evidence, session.clock())
    keep_probe(session.fleet, host, port, result)
    ui.finished(record)
    return record


async def _agreed(op: Operation, ctx: ActionContext, host: str, port: int, ui: Ui) -> bool:
    try:
        plan = await op.plan(ctx, host, port)
    except ConsoleError as exc:
        ui.refused(f"{op.name} {host}:{port}: {exc}")
        return False
    if not plan.destructive:
        return True
    agreed = await ui.confirm(plan)
    if not agreed:
        ui.refused(f"{op.name} {host}:{port} cancelled: nothing was changed")
    return agreed


async def _run(op: Operation, ctx: ActionContext, host: str, port: int) -> ActionResult:
    target = f"{host}:{port}"
    try:
        return await op.run(ctx, host, port)
    except StageFailed as exc:
        return _failed(ctx, op, target, exc)
    except ConsoleError as exc:
        return ctx.result(op.name, target, False, str(exc))
    except Exception as exc:  # a bug in an action must not take the console down with it
        log.exception("%s %s", op.name, target)
        return ctx.result(op.name, target, False, f"internal error: {type(exc).__name__}: {exc}")


def _failed(ctx: ActionContext, op: Operation, target: str, exc: StageFailed) -> ActionResult:
    result = ctx.result(op.name, target, False, str(exc))
    result.evidence = result.evidence or list(exc.evidence)
    return result


@contextmanager
def doing(fleet: FleetState, host: str, port: int, what: str | None) -> Iterator[None]:
    """Mark the server as busy with an action (its status says so) for as long as it runs."""
    server = fleet.server(host, port)
    if server is None or what is None:
        yield
        return
    server.action = what
    _changed(fleet, host, port)
    try:
        yield
    finally:
        server.action = None
        _changed(fleet, host, port)


def keep_probe(fleet: FleetState, host: str, port: int, result: ActionResult) -> None:
    server = fleet.server(host, port)
    if server is not None and result.data.get("probe") is not None:
        server.probe = result.data["probe"]
        _changed(fleet, host, port)


def _changed(fleet: FleetState, host: str, port: int) -> None:
    fleet.refresh_status(host)
    fleet.changed(host, port)
