"""What was done this session: one record per action, kept in order."""

from __future__ import annotations

from dataclasses import dataclass, field

from sglconsole.actions import Stage


@dataclass
class ActionRecord:
    action: str
    target: str
    started: float
    ok: bool | None = None
    """None while it runs; then whether it succeeded (a cancelled action is not recorded)."""
    summary: str = ""
    stages: list[Stage] = field(default_factory=list)
    evidence: list[str] = field(default_factory=list)
    ended: float | None = None

    @property
    def running(self) -> bool:
        return self.ok is None

    def stage(self, stage: Stage) -> None:
        """The same Stage object comes back each time it changes: keep it once, in order."""
        if not any(kept is stage for kept in self.stages):
            self.stages.append(stage)

    def finish(self, succeeded: bool, summary: str, evidence: list[str], now: float) -> None:
        self.ok, self.summary, self.evidence, self.ended = succeeded, summary, evidence, now


@dataclass
class AlertRecord:
    time: float
    target: str
    old: str
    new: str
    reason: str
