"""What each server status means, declared once: one record per status, every view's table derived.

Rank, colour, problem or not, alert severity and name, exit code and help text used to live in seven
tables in six modules, so adding a status meant editing six files and missing one drew a blank
badge. Now a status is its `Status` member plus one `StatusInfo` in `STATUSES`; the severity order,
the alert tracker's problems, the webhook's severities, the TUI palette, the CLI's table styles, the
help screen and `sglconsole status`'s exit code all read these records. A member without a record
(or a record twice) is refused at import, so no view can lack it.

Colours stay a view's business: a record names the TUI theme *role* it borrows (the palette turns
it into a style for the active theme) and the Rich style of the CLI's one-shot tables, which have
no theme to read.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from enum import StrEnum
from types import MappingProxyType


# the vocabulary, in reading order (help, exporter, JSON schema); the severity is STATUSES' order
# (no docstring: the JSON schema of `status --json` would carry it as the enum's description)
class Status(StrEnum):
    UP = "UP"
    STARTING = "STARTING"
    DOWN = "DOWN"
    DRIFT = "DRIFT"
    SLOW = "SLOW"
    DEGENERATE = "DEGENERATE"
    LOOPING = "LOOPING"
    STALLED = "STALLED"
    UNMANAGED = "UNMANAGED"
    UNREACHABLE = "UNREACHABLE"
    UNKNOWN = "UNKNOWN"


@dataclass(frozen=True, kw_only=True)
class StatusInfo:
    status: Status
    meaning: str
    """One line for the `?` help screen: what it means and the usual way out."""
    problem: bool
    """Alerts fire when a server turns to it (and resolve when it leaves)."""
    critical: bool = False
    """Its alert is `severity: critical` (garbage, nothing, or cannot be seen); else warning."""
    calm: bool = False
    """Nothing to look at: plain text in the TUI (no filled badge), not counted in the title."""
    healthy: bool = False
    """`sglconsole status` exits 0 only when every configured server has a healthy status."""
    role: str
    """The TUI theme colour it borrows (success, primary, warning, error, secondary), or "muted"."""
    style: str
    """The Rich style of its badge in the CLI's tables (a terminal, no theme)."""

    @property
    def alert_name(self) -> str:
        """Alertmanager's alertname: SglconsoleSlow, SglconsoleDown, ..."""
        return "Sglconsole" + self.status.value.title()

    @property
    def severity(self) -> str:
        return "critical" if self.critical else "warning"


# worst first: the terminal title, the host badge and the top bar's counts show the worst one;
# a looping or stalled server takes requests and gives garbage or nothing: at least as bad as DOWN
STATUSES: tuple[StatusInfo, ...] = (
    StatusInfo(
        status=Status.UNREACHABLE,
        meaning="SSH to the host fails; the console retries with backoff",
        problem=True,
        critical=True,
        role="error",
        style="bold white on red",
    ),
    StatusInfo(
        status=Status.DEGENERATE,
        meaning="the probe's answer loops",
        problem=True,
        critical=True,
        role="error",
        style="bold white on red",
    ),
    StatusInfo(
        status=Status.LOOPING,
        meaning="accept rate pinned at its ceiling while requests run (repeating output)",
        problem=True,
        critical=True,
        role="error",
        style="bold red",
    ),
    StatusInfo(
        status=Status.STALLED,
        meaning="no HTTP answer and no decode line for a while, with requests waiting (hung)",
        problem=True,
        critical=True,
        role="error",
        style="bold white on red",
    ),
    StatusInfo(
        status=Status.DOWN,
        meaning="configured in hosts.yaml but not running",
        problem=True,
        critical=True,
        role="error",
        style="bold red",
    ),
    StatusInfo(
        status=Status.SLOW,
        meaning="decode tok/s under the profile's baseline for the last minute",
        problem=True,
        role="warning",
        style="bold magenta",
    ),
    StatusInfo(
        status=Status.DRIFT,
        meaning="running argv/env/version differs from the proven profile (d shows how)",
        problem=True,
        role="warning",
        style="bold yellow",
    ),
    StatusInfo(
        status=Status.STARTING,
        meaning="launched, not ready yet (or an action is working on it)",
        problem=False,
        role="primary",
        style="bold cyan",
    ),
    StatusInfo(
        status=Status.UNMANAGED,
        meaning="an SGLang server running that hosts.yaml does not know (c captures it)",
        problem=True,
        role="secondary",
        style="bold blue",
    ),
    StatusInfo(
        status=Status.UNKNOWN,
        meaning="connecting",
        problem=False,
        calm=True,
        role="muted",
        style="dim",
    ),
    StatusInfo(
        status=Status.UP,
        meaning="serving, matches its profile, at its baseline speed",
        problem=False,
        calm=True,
        healthy=True,
        role="success",
        style="bold green",
    ),
)


def complete(records: Iterable[StatusInfo]) -> Mapping[Status, StatusInfo]:
    """Each status's record; refuses a status without one, or with two (no view may lack one)."""
    by_status: dict[Status, StatusInfo] = {}
    for record in records:
        if record.status in by_status:
            raise ValueError(f"status {record.status.value} is declared twice")
        by_status[record.status] = record
    missing = [status.value for status in Status if status not in by_status]
    if missing:
        raise ValueError(f"status without a record in STATUSES: {', '.join(missing)}")
    return MappingProxyType(by_status)


INFO: Mapping[Status, StatusInfo] = complete(STATUSES)
SEVERITY: list[Status] = [record.status for record in STATUSES]
"""Worst first."""
PROBLEMS: frozenset[Status] = frozenset(record.status for record in STATUSES if record.problem)
CRITICAL: frozenset[Status] = frozenset(record.status for record in STATUSES if record.critical)
CALM: frozenset[Status] = frozenset(record.status for record in STATUSES if record.calm)


def worst(statuses: Iterable[Status]) -> Status:
    present = set(statuses)
    return next((status for status in SEVERITY if status in present), Status.UP)
