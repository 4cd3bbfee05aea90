"""The monitor without a screen: `sglconsole exporter` serves the fleet as Prometheus metrics
(/metrics) and as `status --json` (/status), and raises the console's alerts."""
