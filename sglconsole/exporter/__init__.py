"""The monitor without a screen: `sglconsole exporter` serves the fleet as Prometheus metrics
(/metrics) and as `status --json` (/status), and raises the console's alerts."""

STOP_S = 10.0
"""All that stopping waits for (requests being answered, alert deliveries, SSH sessions) shares
this, well inside systemd's stop timeout (90 s): a stuck part is named and cut short."""
