"""One simulated GPU host: its root folder (root.py), PID 1 of its namespaces (init.py), its
daemons (hostd.py: sshd and the servers running at boot) and how an operator leaves a
process running (detach.py)."""
