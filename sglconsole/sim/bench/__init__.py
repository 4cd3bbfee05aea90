"""`python -m sglang.bench_serving`, simulated (serving.py), with its arithmetic (metrics.py)."""
