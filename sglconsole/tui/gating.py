"""Which keys apply right now: True (usable), None (shown greyed out), False (hidden).

Read-only hides everything that changes a host; a key that needs a server is
greyed while a host is selected, so the footer teaches what exists.
"""

from __future__ import annotations

from dataclasses import dataclass

from sglconsole.catalog import ACTIONS
from sglconsole.state.fleet import ServerState
from sglconsole.tui.keys import action_name

# what each action needs, from its record (sglconsole.catalog), by its Textual action name
ACTS = {action_name(action.name) for action in ACTIONS.values()}
"""Reaches a host: off in a replay, greyed while another action runs on the server."""
CHANGES_HOST = {action_name(action.name) for action in ACTIONS.values() if action.changes_host}
NEEDS_SERVER = ACTS | {"diff", "log", "gpus", "filter", "follow", "verbatim"}
NEEDS = {action_name(action.name): action.needs for action in ACTIONS.values() if action.needs}


@dataclass(frozen=True)
class Facts:
    server: ServerState | None
    read_only: bool
    busy: bool = False
    """An action already runs on the selected server."""
    closable: bool = False
    """A progress panel or a log filter is open."""
    live: bool = True
    """Connected to hosts (False when replaying a recording: nothing can be done to a host)."""

    @property
    def managed(self) -> bool:
        return self.server is not None and self.server.managed

    @property
    def running(self) -> bool:
        return self.server is not None and self.server.process is not None

    def key(self) -> tuple:
        """What the key gating depends on (cheap to compare; the server itself is not)."""
        return (
            self.server is not None,
            self.managed,
            self.running,
            self.read_only,
            self.busy,
            self.closable,
            self.live,
        )


REPLAY_ONLY = {"replay_pause", "replay_seek"}


def state(action: str, facts: Facts) -> bool | None:
    if action in REPLAY_ONLY:
        return not facts.live
    if action in CHANGES_HOST | {"lock"} and facts.read_only:
        return False
    if action in ACTS and not facts.live:
        return False
    if action == "close":
        return facts.closable  # hidden when there is nothing to close
    if action in NEEDS_SERVER and facts.server is None:
        return None
    if action in ACTS and facts.busy:
        return None
    if not all(getattr(facts, need) for need in NEEDS.get(action, ())):
        return None
    return True


def refusal(
    action: str, label: str, facts: Facts, host: str | None = None, servers: int = 0
) -> str | None:
    """Why a key does nothing now, said instead of silence (None: it runs, or it is not ours).

    LABEL names the action for the operator; HOST and SERVERS: the selected host and how many
    servers it has, when a host (not a server) is selected."""
    if state(action, facts):
        return None
    if action in CHANGES_HOST | {"lock"} and facts.read_only and facts.live:
        if action == "lock":
            return None  # already read-only: nothing to say
        return f"read-only: {label} is off (started with --read-only or L)"
    if action in ACTS and not facts.live:
        return f"replay: {label} is off (a recording cannot reach a host)"
    if action in NEEDS_SERVER and facts.server is None:
        return f"select a server ({host} has {servers})" if host else "select a server"
    if action in ACTS and facts.busy:
        return f"{label}: an action already runs on {facts.server.key}"
    if "running" in NEEDS.get(action, ()) and not facts.running:
        return f"{label}: nothing runs on {facts.server.key}"
    if "managed" in NEEDS.get(action, ()) and not facts.managed:
        return f"{label}: {facts.server.key} is not in hosts.yaml (c captures it)"
    return None
