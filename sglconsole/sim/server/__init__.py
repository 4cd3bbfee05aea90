"""The simulated SGLang server (main.py: `python -m sglang.launch_server` on a simulated host):
its scheduler (engine.py), HTTP API (http.py, routes*.py, metrics_page.py), logs (logfmt.py,
graphs.py, history.py), speed (perf.py), failures and stalls, children, and the weight-cache
daemon. What each release serves comes from sim/versions/, never from here."""
