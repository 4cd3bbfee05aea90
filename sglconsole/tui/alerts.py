"""Moved to sglconsole.alerts.tracker (the exporter raises the same alerts without a screen);
re-exported here for the TUI and older imports."""

from sglconsole.alerts.tracker import (  # noqa: F401
    HOLD_S,
    PROBLEMS,
    QUIET_S,
    SILENT_FROM,
    Alert,
    AlertTracker,
    rank,
    sweep,
)
