"""The per-host feeds: one HostMonitor per host (host_monitor.py) over one SSH connection, and
the feeds it runs into the fleet's state: GPUs (gpu.py), the watcher agent's processes and logs
(watcher.py), systemd journals (journal.py), each server's HTTP answers (http.py) and its drift
(drift.py); host_link.py is what they share, backoff.py how long a lost host waits."""
