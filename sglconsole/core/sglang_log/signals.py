"""SGLang's own warnings that come before an outage, from one log line — pure.

* `[canary] step=N protected_tokens=N sweep_passes=N violations=N launch_tags_active=a/b`: the
  KV canary's stats line (`--kv-canary log`, 0.5.23, kv_canary/runner/stats_logger.py);
* `Detected errors during sampling! NaN in the logits.`: the sampler's NaN check
  (SGLANG_ENABLE_NAN_LOGITS_CHECK; `--enable-nan-detection` before 0.5.23);
* `Health check failed. Server couldn't get a response from detokenizer ...`: /health gave up.

A cheap substring test first: most lines are decode lines and carry none of them.
"""

from __future__ import annotations

import re

__all__ = ["signal_of"]

_VIOLATIONS_RE = re.compile(r"\bviolations=(\d+)")
_MARKS = (
    ("[canary]", "kv_canary"),
    ("NaN in the logits", "nan_logits"),
    ("Health check failed", "health_check_failed"),
)


def signal_of(text: str) -> tuple[str, int | None] | None:
    """(kind, violations) for a signal line (violations only for the KV canary's), else None."""
    for mark, kind in _MARKS:
        if mark in text:
            if kind != "kv_canary":
                return kind, None
            found = _VIOLATIONS_RE.search(text)
            return (kind, int(found.group(1))) if found else None
    return None
