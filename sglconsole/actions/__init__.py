"""The only code that changes a host. Each action is `await action(ctx, host, port, ...)`."""

from sglconsole.actions.base import (
    ActionContext,
    ActionResult,
    Plan,
    Stage,
    StageFailed,
    StageState,
)
from sglconsole.actions.capture import capture, capture_unit
from sglconsole.actions.kill import kill, plan_kill
from sglconsole.actions.launch import plan_relaunch, relaunch
from sglconsole.actions.probe import ProbeResult, probe
from sglconsole.actions.restore import restore
from sglconsole.actions.rollback import plan_rollback, rollback

__all__ = [
    "ActionContext",
    "ActionResult",
    "Plan",
    "ProbeResult",
    "Stage",
    "StageFailed",
    "StageState",
    "capture",
    "capture_unit",
    "kill",
    "plan_kill",
    "plan_relaunch",
    "plan_rollback",
    "probe",
    "relaunch",
    "restore",
    "rollback",
]
