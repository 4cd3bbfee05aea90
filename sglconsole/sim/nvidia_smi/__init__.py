"""The simulated `nvidia-smi` (cli.py) and dcgm-exporter (dcgm.py) of a host: the GPUs'
readings (state.py) rendered as the query CSV (query.py), the `-q` report (report.py, from
data/), the default table (table.py), in nvidia-smi's own formats (format.py)."""
