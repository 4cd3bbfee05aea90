"""Plan -> confirm -> run -> record, for every action the console can take on a server.

The flow is UI-agnostic: it talks to the screen through the small `Frontend`
protocol, so it runs the same inside a Textual worker and in a test.
"""

from __future__ import annotations

import dataclasses
import logging
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Protocol

from sglconsole.actions import ActionContext, ActionResult, Plan, StageFailed
from sglconsole.actions.caveats import caveats, known_state
from sglconsole.actions.registry import Action
from sglconsole.errors import ConsoleError
from sglconsole.state.fleet import FleetState
from sglconsole.tui.history import ActionRecord
from sglconsole.tui.session import Session

log = logging.getLogger(__name__)


def replace_profile_plan(name: str, target: str, path: object) -> Plan:
    return Plan(
        "replace profile",
        name,
        [
            f"profile {name!r} already exists in {path}",
            f"it will be replaced by the config that runs on {target}",
        ],
    )


class Frontend(Protocol):
    async def confirm(self, plan: Plan) -> bool: ...
    def progress(self, record: ActionRecord) -> None: ...
    def finished(self, record: ActionRecord) -> None: ...
    def refused(self, message: str) -> None: ...


async def perform(
    action: Action, host: str, port: int, session: Session, frontend: Frontend, **options
) -> ActionRecord | None:
    """Run one action end to end; None when it was refused or cancelled (nothing changed)."""
    record = ActionRecord(action.name, f"{host}:{port}", session.clock())
    ctx = session.context(lambda stage: (record.stage(stage), frontend.progress(record)))
    ctx.known_state = known_state(session.fleet.server(host, port))
    plan = None
    if action.confirm:
        plan = await _agreed(action, ctx, host, port, frontend, session.fleet)
        if plan is None:
            return None
        record.started = session.clock()  # its time is the action's, not the dialog's
    session.history.append(record)
    frontend.progress(record)
    with doing(session.fleet, host, port, action.doing):
        result = await _run(action, ctx, host, port, plan, options)
    record.finish(result.ok, result.summary, result.evidence, session.clock())
    keep_probe(session.fleet, host, port, result)
    frontend.finished(record)
    return record


async def _agreed(
    action: Action, ctx: ActionContext, host: str, port: int, frontend: Frontend, fleet: FleetState
) -> Plan | None:
    """The plan the operator agreed to (None: refused or cancelled), with what the console
    knows against it."""
    try:
        plan = await action.plan(ctx, host, port)
    except ConsoleError as exc:
        frontend.refused(f"{action.name} {host}:{port}: {exc}")
        return None
    plan.warnings = caveats(action.name, ctx.config, fleet.server(host, port))
    if not plan.destructive:
        return plan
    if not await frontend.confirm(plan):
        frontend.refused(f"{action.name} {host}:{port} cancelled: nothing was changed")
        return None
    return plan


async def _run(
    action: Action, ctx: ActionContext, host: str, port: int, plan: Plan | None, options: dict
) -> ActionResult:
    target = f"{host}:{port}"
    try:
        return await action.run(ctx, host, port, plan, **options)
    except StageFailed as exc:
        return _failed(ctx, action, target, exc)
    except ConsoleError as exc:
        return ctx.result(action.name, target, False, str(exc))
    except Exception as exc:  # a bug in an action must not take the console down with it
        log.exception("%s %s", action.name, target)
        return ctx.result(
            action.name, target, False, f"internal error: {type(exc).__name__}: {exc}"
        )


def _failed(ctx: ActionContext, action: Action, target: str, exc: StageFailed) -> ActionResult:
    result = ctx.result(action.name, target, False, str(exc), **exc.data)
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
    server.action_found_pid = server.process.main.pid if server.process else None
    fleet.publish(host, port=port)
    try:
        yield
    finally:
        server.action = None
        server.action_ended = time.time()  # a router list read before this is stale (routing)
        fleet.publish(host, port=port)


def keep_probe(fleet: FleetState, host: str, port: int, result: ActionResult) -> None:
    """The action's verdict becomes the server's (passed or failed: a failed probe keeps the
    server in its problem state). A probe of no launch judged the process that runs now."""
    server = fleet.server(host, port)
    verdict = result.data.get("probe")
    if server is None or verdict is None:
        return
    if verdict.pid is None and server.process is not None:
        verdict = dataclasses.replace(verdict, pid=server.process.main.pid)
    server.probe = verdict
    fleet.publish(host, port=port)
