"""The generated 0.5.17 flag table against the real 0.5.17 parser dump captured on the H200.

sglconsole/data/flags/sglang-0.5.17.json comes from tools/gen_flag_table_overlay.sh (real
sglang 0.5.17 imported on a CPU-only machine); flags-0.5.17.json was dumped from the real
server's own interpreter. Action by action: dest, option strings, default, choices, nargs.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.sim.test_sim_matches_real_0517 import REAL

TABLE = Path(__file__).resolve().parents[2] / "sglconsole" / "data" / "flags" / "sglang-0.5.17.json"
pytestmark = pytest.mark.skipif(REAL is None, reason="no real-sglang-0.5.17-h200 fixture here")


def _repr(value: object) -> str:
    """The table keeps JSON values, or {"repr": ...} for the rest; the dump keeps repr()."""
    if isinstance(value, dict) and set(value) == {"repr"}:
        return value["repr"]
    return repr(value)


def _facts(action: dict, default: str, unordered: bool) -> tuple:
    choices = action["choices"]
    if choices is not None:
        # a set of choices (sampling_backend) has no order: the dump kept one run's hash order
        choices = frozenset(choices) if unordered else tuple(choices)
    return (action["dest"], tuple(action["option_strings"]), default, choices, action["nargs"])


def test_every_action_agrees_with_the_real_parser():
    real = json.loads((REAL / "flags-0.5.17.json").read_text())
    table = json.loads(TABLE.read_text())
    assert table["sglang_version"] == real["version"] == "0.5.17"
    assert len(table["actions"]) == len(real["actions"]) == 475
    pairs = list(zip(table["actions"], real["actions"], strict=True))
    mismatched = [
        (mine, real_one)
        for mine, real_one in (
            (
                _facts(ours, _repr(ours["default"]), bool(ours.get("choices_unordered"))),
                _facts(theirs, theirs["default"], bool(ours.get("choices_unordered"))),
            )
            for ours, theirs in pairs
        )
        if mine != real_one
    ]
    assert not mismatched, mismatched[:5]


def test_the_table_says_how_it_was_made():
    table = json.loads(TABLE.read_text())
    assert table["generated_by"] == "tools/gen_flag_table.py"
    assert "tools/gen_flag_table_overlay.sh" in table["environment"]
    assert "torchvision" in table["environment"]
