"""The generated flag tables against what real SGLang said on the H200 (tests/fixtures/).

sglconsole/data/flags/sglang-X.json is dumped from release X's own parser on a CPU-only
machine, with do-nothing stand-ins for third-party modules the machine lacks
(tools/gen_flag_table_overlay.sh). Were a stand-in to change a default, a choice or a
deprecation, these catch it:

* 0.5.17: flags-0.5.17.json, dumped by the real server's own interpreter: every action's
  option strings, dest, kind (its class), nargs, default, type, choices;
* 0.5.12 (no parser dump was taken there): every flag's dest is a /server_info key (or
  renamed into one, or a deprecated flag that stores nothing), and every default equals
  what /server_info reported for the flags the launch did not give, except the ones
  SGLang resolves at startup (listed);
* both: the deprecation lines the real server logged for its launch flags are the table's
  own messages for those flags, and a launch flag that logged none is no deprecated one.
"""

from __future__ import annotations

import json
import re
import shlex
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
FLAGS = ROOT / "sglconsole" / "data" / "flags"
SIM = ROOT / "sglconsole" / "sim" / "versions"


def _fixture(version: str) -> Path | None:
    candidates = [
        ROOT / "tests" / "fixtures" / f"real-sglang-{version}-h200",
        ROOT.parent / "shared" / "fixtures" / f"real-sglang-{version}-h200",
    ]
    return next((path for path in candidates if path.is_dir()), None)


def _need(version: str) -> Path:
    real = _fixture(version)
    if real is None:
        pytest.skip(f"no real-sglang-{version}-h200 fixture here")
    return real


def _table(version: str) -> dict:
    return json.loads((FLAGS / f"sglang-{version}.json").read_text())


def _value(value: object) -> object:
    """The table keeps JSON values, or {"repr": ...} for the rest."""
    if isinstance(value, dict) and set(value) == {"repr"}:
        return value["repr"]
    return value


def _repr(value: object) -> str:
    return value["repr"] if isinstance(value, dict) and set(value) == {"repr"} else repr(value)


_STD_CLASSES = {
    "_StoreAction": "store",
    "_StoreTrueAction": "store_true",
    "_StoreFalseAction": "store_false",
    "_StoreConstAction": "store_const",
    "_AppendAction": "append",
    "_CountAction": "count",
    "_HelpAction": "help",
    "BooleanOptionalAction": "boolean_optional",
}


def _real_kind(cls: str) -> str:
    return _STD_CLASSES.get(cls, f"custom:{cls}")


def _real_type(name: str) -> str | None:
    if name == "None":
        return None
    if name == "loads":
        return "json"
    return name if name in ("str", "int", "float", "bool") else f"custom:{name}"


def _facts(action: dict, unordered: bool) -> tuple:
    choices = action["choices"]
    if choices is not None:
        # a set of choices (sampling_backend) has no order: the dump kept one run's hash order
        choices = frozenset(choices) if unordered else tuple(choices)
    return (
        action["dest"],
        tuple(action["option_strings"]),
        action["kind"],
        action["nargs"],
        action["default"],
        action["type"],
        choices,
    )


def test_0517_every_action_agrees_with_the_real_parser():
    real = json.loads((_need("0.5.17") / "flags-0.5.17.json").read_text())
    table = _table("0.5.17")
    assert table["sglang_version"] == real["version"] == "0.5.17"
    assert len(table["actions"]) == len(real["actions"]) == 475
    mismatched = []
    for ours, theirs in zip(table["actions"], real["actions"], strict=True):
        unordered = bool(ours.get("choices_unordered"))
        mine = _facts({**ours, "default": _repr(ours["default"])}, unordered)
        real_one = _facts(
            {**theirs, "kind": _real_kind(theirs["cls"]), "type": _real_type(theirs["type"])},
            unordered,
        )
        if mine != real_one:
            mismatched.append((mine, real_one))
    assert not mismatched, mismatched[:5]


# what 0.5.12 resolves at startup (ServerArgs.__post_init__ and the model/GPU): the table's
# default (None/"auto"/False) is replaced, so /server_info cannot show it
RESOLVED_0512 = {
    "tokenizer_path", "served_model_name", "device", "random_seed", "page_size",
    "chunked_prefill_size", "load_balance_method", "speculative_eagle_topk",
    "speculative_moe_runner_backend", "expert_distribution_recorder_buffer_size",
    "mamba_scheduler_strategy", "cuda_graph_bs", "disable_overlap_schedule",
    "piecewise_cuda_graph_tokens", "piecewise_cuda_graph_max_tokens", "custom_weight_loader",
    "mm_process_config",
}  # fmt: skip


def _launch_argv(real: Path) -> list[str]:
    first = (real / "launches.txt").read_text().splitlines()[0]
    return shlex.split(first.split(": ", 1)[1])


def test_0512_defaults_and_dests_agree_with_the_real_server_info():
    real = _need("0.5.12")
    table = _table("0.5.12")
    info = json.loads((real / "idle" / "server_info.txt").read_text())
    renames = json.loads((SIM / "sglang-0.5.12.json").read_text())["cli_dest_renames"]
    options = [a for a in table["actions"] if a["option_strings"] and a["kind"] != "help"]
    by_option = {o: a for a in options for o in a["option_strings"]}
    given = {by_option[arg]["dest"] for arg in _launch_argv(real) if arg in by_option}
    assert {"model_path", "cuda_graph_max_bs", "mem_fraction_static"} <= given
    unknown = [
        a["dest"]
        for a in options
        if a["dest"] not in info
        and renames.get(a["dest"]) not in info
        and not a["kind"].startswith("custom:Deprecated")
        and a["dest"] != "config"  # --config FILE: read into the other args, not one itself
    ]
    assert not unknown
    differ = {
        a["dest"]: (_value(a["default"]), info[a["dest"]])
        for a in options
        if a["dest"] in info and a["dest"] not in given | RESOLVED_0512
        if _value(a["default"]) != info[a["dest"]]
    }
    assert not differ
    # and the resolved ones really are resolved (else they belong above)
    assert all(_value(by_dest["default"]) != info[by_dest["dest"]] for by_dest in options
               if by_dest["dest"] in RESOLVED_0512)  # fmt: skip


DEPRECATION = re.compile(r"\x1b\[1;33m(.*?)\x1b\[0m")


@pytest.mark.parametrize("version", ["0.5.12", "0.5.17"])
def test_deprecation_lines_of_the_launch_are_the_tables_own(version):
    real = _need(version)
    table = _table(version)
    logged = set(DEPRECATION.findall((real / "sglang-30000.log").read_text(errors="replace")))
    by_option = {o: a for a in table["actions"] for o in a["option_strings"]}
    launch = [by_option[arg] for arg in _launch_argv(real) if arg in by_option]
    said = {
        message
        for action in launch
        for use in (action.get("action_info") or {}).get("on_use", [])
        for message in use.get("messages", [])
    }
    assert said == logged
    deprecated = {a["dest"] for a in launch if a["kind"].startswith("custom:Deprecated")}
    assert bool(deprecated) == bool(logged)
    if version == "0.5.17":
        assert deprecated == {"cuda_graph_max_bs_decode"}  # --cuda-graph-max-bs, an old spelling


@pytest.mark.parametrize("version", ["0.5.12", "0.5.17"])
def test_the_table_says_how_it_was_made(version):
    table = _table(version)
    assert table["generated_by"] == "tools/gen_flag_table.py"
    assert "tools/gen_flag_table_overlay.sh" in table["environment"]
    assert table["environment"].startswith(f"PyPI wheel sglang-{version}-")
    assert "torchvision" in table["stubbed_modules"]  # no CPU torchvision for the venv's torch
