"""How a simulated server looks healthy while it is not: answers that stop, decay, hang or change.

Each is a host setting (settings.py), per server under "ports", read live for every generation
request (/generate, /v1/chat/completions; /health's own one-token generation is never touched, so
/health keeps answering 200 through all of them). Counted requests are this process's generation
requests, from its start:

* "stop_serving_after": N — the requests after the Nth get no answer at all, while /health says
  200 (sglang#22779: a server that silently stopped serving after ~100 requests);
* "hang_requests": true — every request hangs forever and never reaches the scheduler, so
  /v1/loads says 0 running and 0 queued (#33858);
* "degrade_after": N — the answers after the Nth loop ("2 + 2 = 2. 2 + 2 = 2.", " prime prime"),
  as #23020's gibberish after ~150 requests with PD disaggregation and #29157's `!!!!` did;
* "nondeterministic": true — a greedy (temperature 0) answer changes from one request to the next
  (#22819), still containing the right answer;
* "nan_logits": true — each request logs SGLang's sampler warning "Detected errors during
  sampling! NaN in the logits." (its wording with SGLANG_ENABLE_NAN_LOGITS_CHECK);
* "kv_canary_violations": N — SGLang's own KV canary (`--kv-canary log`, 0.5.23) logs its stats
  line every KV_CANARY_EVERY_S with violations=N (kv_canary/runner/stats_logger.py's wording).
"""

from __future__ import annotations

import asyncio
import itertools
import random

from sglconsole.sim import settings
from sglconsole.sim.server import logfmt

KV_CANARY_EVERY_S = 2.0  # how often the simulated KV canary writes its stats line
NAN_WARNING = "Detected errors during sampling! NaN in the logits."
VARIANTS = ("{answer}", "{answer}.", "The answer is {answer}.", "{answer}, I think.")
"""What a non-deterministic server says instead of its one greedy answer: the answer stays in it,
the words around it change."""


class Misbehaviour:
    """One server's generation requests, counted, and what the host says to do with each."""

    def __init__(self, root: str, port: int):
        self.root = root
        self.port = port
        self.requests = 0
        self.random = random.Random(port)

    def _settings(self) -> dict:
        return settings.server_settings(self.root, self.port)

    def admit(self) -> tuple[bool, bool]:
        """Count one generation request: (hang it, degrade its answer)."""
        self.requests += 1
        values = self._settings()
        if values.get("nan_logits"):
            print(logfmt.line(NAN_WARNING), flush=True)
        stop_after = values.get("stop_serving_after")
        hang = bool(values.get("hang_requests")) or (
            stop_after is not None and self.requests > int(stop_after)
        )
        degrade_after = values.get("degrade_after")
        degrade = degrade_after is not None and self.requests > int(degrade_after)
        return hang, degrade

    def vary(self, tokens: list[str]) -> list[str]:
        """A greedy answer as a non-deterministic server gives it (unchanged when it is not)."""
        if not self._settings().get("nondeterministic") or not tokens:
            return tokens
        answer = "".join(tokens).strip()
        return [" " + self.random.choice(VARIANTS).format(answer=answer)]

    async def hang(self) -> None:
        """Never answer: the request is lost between the HTTP process and the scheduler."""
        await asyncio.Event().wait()

    async def kv_canary(self) -> None:
        """SGLang's KV canary stats line, while the host sets kv_canary_violations."""
        for step in itertools.count(1):
            await asyncio.sleep(KV_CANARY_EVERY_S)
            violations = self._settings().get("kv_canary_violations")
            if violations is None:
                continue
            print(
                logfmt.line(
                    f"[canary] step={step * 100} protected_tokens={4096 + step} "
                    f"sweep_passes={step} violations={int(violations)} launch_tags_active=1/1"
                ),
                flush=True,
            )
