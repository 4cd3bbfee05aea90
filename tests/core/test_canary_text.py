"""The canary's judge and SGLang's own warning lines, on real text: the `Health check failed`
line is the real 0.5.17 H200's (tests/fixtures), the `[canary]` and NaN lines are SGLang 0.5.23's
wording (kv_canary/runner/stats_logger.py, the sampler's NaN check)."""

from __future__ import annotations

from sglconsole.core.canary import PROMPTS, digest, judge, worst
from sglconsole.core.sglang_log.signals import signal_of
from tests.conftest import FIXTURES

REAL_LOG = FIXTURES / "real-sglang-0.5.17-h200" / "sglang-30000.log"


def test_the_real_health_check_failures_are_counted_and_nothing_else_is():
    found = [signal_of(line) for line in REAL_LOG.read_text(errors="replace").splitlines()]
    kinds = [one for one in found if one is not None]
    assert kinds and set(kinds) == {("health_check_failed", None)}, set(kinds)


def test_the_kv_canary_line_gives_its_violations_and_the_nan_line_its_kind():
    line = (
        "[2026-12-05 10:00:00 TP0] [canary] step=1200 protected_tokens=4096 sweep_passes=12 "
        "violations=3 launch_tags_active=1/1"
    )
    assert signal_of(line) == ("kv_canary", 3)
    nan = "[2026-12-05 10:00:01 TP0] Detected errors during sampling! NaN in the logits."
    assert signal_of(nan) == ("nan_logits", None)
    assert signal_of("[2026-12-05 10:00:02 TP0] [canary] starting sweep") is None  # no count


def test_an_answer_is_ok_wrong_or_degenerate():
    arith = PROMPTS[0]
    assert judge(arith, "The answer is 4.") == ("OK", "")
    assert judge(arith, "5")[0] == "WRONG"
    assert judge(arith, "2 + 2 = 2.2 + 2 = 2.2 + 2 = 2.2")[0] == "DEGENERATE"
    assert worst(["OK", "WRONG", "TIMEOUT"]) == "TIMEOUT" and worst(["OK"]) == "OK"
    assert digest("4") == digest("4") != digest("4.")
