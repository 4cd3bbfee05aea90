"""What one console session holds besides the fleet: its safety mode, history and running
actions."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field

from sglconsole.actions import ActionContext, Stage
from sglconsole.config import Config
from sglconsole.remote.ssh.connection import SshFleet
from sglconsole.state.fleet import FleetState
from sglconsole.tui.history import ActionRecord, AlertRecord


@dataclass
class Session:
    config: Config
    fleet: FleetState
    ssh: SshFleet | None
    """None when replaying a recording: nothing can reach a host."""
    read_only: bool = False
    bell: bool = False
    clock: Callable[[], float] = time.time
    history: list[ActionRecord | AlertRecord] = field(default_factory=list)
    busy: set[tuple[str, int]] = field(default_factory=set)

    def lock(self) -> None:
        """Read-only only ever turns on: a console someone locked must not unlock by accident."""
        self.read_only = True

    def context(self, progress: Callable[[Stage], None]) -> ActionContext:
        if self.ssh is None:
            raise RuntimeError("no SSH in a replay: actions are hidden there")
        return ActionContext(self.config, self.ssh, progress=progress)
