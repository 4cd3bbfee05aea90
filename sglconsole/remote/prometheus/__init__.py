"""The fleet read from Prometheus instead of SSH (feed.py): one query API (api.py), SGLang's
own series (sglang_series.py, fed by sglang_feed.py) and what `sglconsole exporter` published
(exporter_series.py)."""
