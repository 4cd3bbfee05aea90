"""Alerts without a screen: the hysteresis that turns status changes into news (tracker), the
operator's `alert_command` (command) and Alertmanager webhooks (webhook). The TUI and the exporter
feed the same tracker, so both tell the same story."""

from sglconsole.alerts.command import run_alert_command
from sglconsole.alerts.tracker import PROBLEMS, Alert, AlertTracker, sweep

__all__ = ["PROBLEMS", "Alert", "AlertTracker", "run_alert_command", "sweep"]
