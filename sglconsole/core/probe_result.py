"""A probe's verdict on one server (actions.probe asks, this records): what the fleet keeps of
it, what the status, the pane, the exporter and the recordings read. Built by keyword past its
verdict and reason."""

from __future__ import annotations

from dataclasses import KW_ONLY, asdict, dataclass


@dataclass(frozen=True)
class ProbeResult:
    verdict: str
    """OK, WRONG, DEGENERATE, SLOW (under the baseline) or ERROR (HTTP status or body)."""
    reason: str
    _: KW_ONLY
    answer: str = ""
    ttft_s: float | None = None
    tok_s: float | None = None
    completion_tokens: int = 0
    accept_len: float | None = None
    throughput_tok_s: float | None = None
    expected_tok_s: float | None = None
    pid: int | None = None
    """The process it judged (None: not known, e.g. a probe of no launch before it is kept)."""
    time: float = 0.0
    """Epoch seconds it was judged."""

    def to_dict(self) -> dict:
        return asdict(self)
