"""What the console already knows against an action, said in its dialog before anything happens:
a relaunch of a profile that loops on this SGLang loops again."""

from __future__ import annotations

from sglconsole.config import Config
from sglconsole.config.routers import routes_of
from sglconsole.state.model import ServerState, Status

RELAUNCHING = ("relaunch", "restore")
"""The actions that start the server's own profile again."""
GARBAGE = (Status.LOOPING, Status.DEGENERATE)
FAILED_PROBES = ("DEGENERATE", "WRONG", "SLOW", "ERROR")


def known_state(server: ServerState | None) -> str | None:
    """'LOOPING, probe DEGENERATE': the status of the process that runs now, and its probe's
    verdict when that probe judged it and failed (the rollback store keeps this with the
    config)."""
    if server is None or server.process is None:
        return None
    said = server.status.value
    probe = server.probe
    if probe is None or probe.pid != server.process.main.pid:
        return said
    if probe.verdict in FAILED_PROBES and probe.verdict != said:
        said += f", probe {probe.verdict}"
    return said


def caveats(action: str, config: Config, server: ServerState | None) -> list[str]:
    """Warnings for ACTION's dialog (none: nothing known against it)."""
    if action not in RELAUNCHING or server is None or server.process is None:
        return []
    drift = server.drift
    if server.status not in GARBAGE or drift is None or drift.differs:
        return []
    version = f" on sglang {server.version}" if server.version else ""
    lines = [
        f"{server.status.value}: its profile already runs and loops{version}: a {action} will"
        " loop again (the same config, the same SGLang); what can fix it is the profile on"
        " another SGLang (its python: or requires_sglang)"
    ]
    routers = [route.router for route in routes_of(config, server.host, server.port)]
    if routers:
        lines.append(
            f"what helps now: take it out of router {', '.join(routers)} so no client gets its"
            " looping answers (ctrl+k kills it and takes it out first)"
        )
    else:
        lines.append("what helps now: ctrl+k kills it, so no client gets its looping answers")
    return lines
