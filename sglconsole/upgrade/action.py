"""The upgrade's record in the action registry: its key in the console (it asks the release first,
the newest sglconsole has tables for by default), its plan (prepare.py's lines: the translation and
every command) and its run. The CLI has its own subcommand (--dry-run, --json, --python)."""

from __future__ import annotations

from sglconsole.actions.base import ActionContext, ActionResult, Plan, StageFailed
from sglconsole.actions.registry import MANAGED, RUNNING, Action
from sglconsole.config.flag_tables import available_versions
from sglconsole.upgrade.prepare import Prepared, prepare
from sglconsole.upgrade.run import upgrade


def newest() -> str:
    """The release the console's key offers first: the newest one sglconsole has tables for."""
    return available_versions()[-1]


async def plan_upgrade(
    ctx: ActionContext, host: str, port: int, version: str | None = None, python: str | None = None
) -> Plan:
    prepared = await prepare(ctx, host, port, version or newest(), python)
    if not prepared.translation.ok:  # what cannot be translated is said, and nothing runs
        raise StageFailed(_refusal(prepared))
    return Plan("upgrade", prepared.target, prepared.lines(), prepared=prepared)


def _refusal(prepared: Prepared) -> str:
    reasons = "; ".join(change.reason for change in prepared.translation.refused)
    return f"cannot translate to SGLang {prepared.translation.to_version}: {reasons}"


async def run_upgrade(
    ctx: ActionContext,
    host: str,
    port: int,
    plan: Plan | None,
    version: str | None = None,
    python: str | None = None,
) -> ActionResult:
    prepared = plan.prepared if plan is not None else None
    if not isinstance(prepared, Prepared):  # the run is given what was shown, when it was
        prepared = await prepare(ctx, host, port, version or newest(), python)
    if not prepared.translation.ok:
        reasons = "; ".join(change.reason for change in prepared.translation.refused)
        raise StageFailed(
            f"cannot translate to SGLang {prepared.translation.to_version}: {reasons}"
        )
    return await upgrade(
        ctx, host, port, translation=prepared.translation, install=prepared.install
    )


UPGRADE = Action(
    name="upgrade",
    help="carry the proven profile to another SGLang release: translate, canary, promote or roll "
    "back",
    label="Upgrade",
    tip="translate the profile to another SGLang, try it on a canary, promote or roll back",
    run=run_upgrade,
    plan=plan_upgrade,
    confirm=True,
    doing="upgrading SGLang (canary)",
    key="U",
    needs=(MANAGED, RUNNING),
    changes_host=True,
    command=False,
)
