"""A simulated fleet, from outside: start K hosts and write the hosts.yaml that reaches them
(start.py), what each host is made of (specs.py), the files it is reached through (files.py),
its process tree (process.py), a started host (host.py) and the ready-made fleets of the demo
and the benches (scenarios.py)."""
