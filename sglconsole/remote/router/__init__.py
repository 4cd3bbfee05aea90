"""SGLang routers, sglang-router 0.3.x and the SMG gateway alike: the worker API (workers.py),
what tells the generations apart and what the gateway publishes per worker (gateway.py), its
/metrics page (metrics.py), and the feed that asks every router in hosts.yaml (feed.py)."""
