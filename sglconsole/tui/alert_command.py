"""Moved to sglconsole.alerts.command; re-exported here for the TUI and older imports."""

from sglconsole.alerts.command import TIMEOUT_S, run_alert_command  # noqa: F401
