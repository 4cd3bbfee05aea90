"""How long a host's monitor waits before it reconnects: capped exponential backoff with
decorrelated jitter.

Every delay is drawn from [base, 3 × the previous delay], capped: it grows like exponential
backoff, but hosts that lost their connections at the same moment (a fleet behind one bastion
that rebooted) spread out instead of reconnecting in lockstep, and no delay falls under `base`.
"""

from __future__ import annotations

import random

BASE_S = 1.0
MAX_BACKOFF_S = 30.0


class Backoff:
    def __init__(
        self, base: float = BASE_S, cap: float = MAX_BACKOFF_S, rng: random.Random | None = None
    ):
        if not 0 < base <= cap:
            raise ValueError(f"expected 0 < base <= cap, got base {base}, cap {cap}")
        self.base = base
        self.cap = cap
        self._rng = rng or random.Random()
        self._last = base

    def next(self) -> float:
        """The next delay in seconds, in [base, cap]."""
        self._last = min(self.cap, self._rng.uniform(self.base, self._last * 3))
        return self._last

    def reset(self) -> None:
        """After a success: the next failure starts again from `base`."""
        self._last = self.base
