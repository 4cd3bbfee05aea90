"""SGLang routers: the worker API (workers.py) and the feed that asks every router in
hosts.yaml for its workers (feed.py)."""
