"""SSH: one connection per host (connection.py), how a host is reached and logged into
(target.py, auth.py), remote commands spelled without the SSH library (transport.py), long
commands read line by line (stream.py), port forwards (forward_sockets.py), and SSH only where
it is needed when the fleet is read from Prometheus (on_demand.py)."""
