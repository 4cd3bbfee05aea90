"""The only code that changes a host. Each action is `await action(ctx, host, port, ...)`."""

from console.actions.base import ActionContext, ActionResult, Plan, Stage, StageFailed, StageState
from console.actions.capture import capture, capture_unit
from console.actions.kill import kill, plan_kill
from console.actions.launch import plan_relaunch, relaunch
from console.actions.probe import ProbeResult, probe
from console.actions.restore import restore
from console.actions.rollback import plan_rollback, rollback

__all__ = [
    "ActionContext", "ActionResult", "Plan", "ProbeResult", "Stage", "StageFailed", "StageState",
    "capture", "capture_unit", "kill", "plan_kill", "plan_relaunch", "plan_rollback", "probe", "relaunch", "restore", "rollback",
]
