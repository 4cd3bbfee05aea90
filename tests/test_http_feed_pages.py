"""HttpFeed: an idle server's /metrics page, the same page every poll, is parsed once."""

from __future__ import annotations

from sglconsole.remote.feeds import http
from sglconsole.remote.feeds.http import HttpFeed

PAGE = """# TYPE sglang:num_running_reqs gauge
sglang:num_running_reqs{model_name="m"} 0.0
# TYPE sglang:generation_tokens_total counter
sglang:generation_tokens_total{model_name="m"} 42.0
"""


def test_the_same_page_is_read_once_and_a_new_process_forgets_it(monkeypatch):
    parsed = []
    real = http.parse_metrics
    monkeypatch.setattr(http, "parse_metrics", lambda text: parsed.append(text) or real(text))
    feed = HttpFeed(link=None, drift=None)
    first = feed._parsed(30000, PAGE)
    assert first is not None and first.generation_tokens_total == 42
    assert feed._parsed(30000, PAGE) is first and len(parsed) == 1
    moved = feed._parsed(30000, PAGE.replace("42.0", "43.0"))  # a counter moved: read again
    assert moved.generation_tokens_total == 43 and len(parsed) == 2
    assert feed._parsed(30001, PAGE) is not first and len(parsed) == 3  # per port
    feed.new_process(30000)  # another process: its numbers are its own
    assert feed._parsed(30000, PAGE.replace("42.0", "43.0")) is not moved and len(parsed) == 4
