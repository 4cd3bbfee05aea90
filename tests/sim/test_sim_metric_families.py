"""The metric families the version tables read from each release's source.

tools/gen_sim_version_table.py records every `sglang:` family a release declares; the 0.5.17
table must hold every family the real 0.5.17 served on the H200, with the same type and help.
"""

from __future__ import annotations

import re

from sglconsole.sim import versiontable
from tests.sim.test_sim_matches_real_0517 import REAL
from tests.sim.test_sim_matches_real_0517 import pytestmark as needs_the_fixture  # noqa: F401

pytestmark = needs_the_fixture


def _declared(version: str) -> dict[str, dict]:
    return {family["name"]: family for family in versiontable.load(version)["metric_families"]}


def test_0_5_17_declares_every_family_the_real_server_served():
    text = (REAL / "under-load" / "metrics.txt").read_text()
    kinds = dict(re.findall(r"^# TYPE (sglang:\S+) (\S+)$", text, re.M))
    helps = dict(re.findall(r"^# HELP (sglang:\S+) (.*)$", text, re.M))
    declared = _declared("0.5.17")
    assert len(kinds) == 71
    missing = sorted(set(kinds) - set(declared))
    assert not missing, missing
    for name, kind in kinds.items():
        assert (declared[name]["type"], declared[name]["help"]) == (kind, helps[name]), name
    # a counter declared with an is_streaming label (two series each in the real page)
    assert "is_streaming" in declared["sglang:prompt_tokens_total"]["labels"]
    assert declared["sglang:queue_time_seconds"]["buckets"][:3] == [0.0, 0.001, 0.005]


def test_every_table_with_families_says_who_writes_them():
    for version in ("0.5.17", "0.5.23"):
        declared = _declared(version)
        assert len(declared) > 100, version
        assert declared["sglang:num_running_reqs"]["written_by"] == [
            {"method": "log_stats", "guard": None}
        ]
        lora = declared["sglang:lora_pool_slots_used"]
        assert lora["declared_if"] == "self.enable_lora"
