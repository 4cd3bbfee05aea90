"""The profile translation (sglconsole.config.upgrade) on the shipped tables: what it carries,
what it respells and why, and what it refuses (a value no longer a choice, a flag no release
knows, a requirement it cannot judge without the model's architecture)."""

from __future__ import annotations

from sglconsole.config.upgrade import translate

NEXT = [
    "--model-path", "/m/Qwen3-Next-80B-A3B", "--speculative-algorithm", "NEXTN",
    "--speculative-num-steps", "3", "--speculative-num-draft-tokens", "4",
]  # fmt: skip


def kinds(translation) -> dict[tuple[str, ...], str]:
    return {change.old or change.new: change.kind for change in translation.changes}


def test_a_value_that_is_no_longer_a_choice_is_refused_with_the_release_that_dropped_it():
    translation = translate(
        ["--model-path", "/m", "--kv-cache-dtype", "fp4_e2m1"],
        {},
        from_version="0.5.12",
        to_version="0.5.23",
        arch="Qwen3ForCausalLM",
    )
    assert not translation.ok
    (refused,) = translation.refused
    assert refused.old == ("--kv-cache-dtype", "fp4_e2m1") and "fp4_e2m1" in refused.reason


def test_an_abbreviation_of_a_removed_flag_becomes_its_replacement_values_kept():
    translation = translate(
        ["--model-path", "/m", "--cuda-graph-max", "16", "--mem-fraction-static=0.85"],
        {},
        from_version="0.5.12",
        to_version="0.5.23",
        arch="Qwen3ForCausalLM",
    )
    assert translation.ok
    assert translation.new_args == (
        "--model-path", "/m", "--cuda-graph-max-bs-decode", "16", "--mem-fraction-static=0.85",
    )  # fmt: skip
    assert kinds(translation)[("--cuda-graph-max", "16")] == "renamed"


def test_a_flag_no_release_knows_is_refused():
    translation = translate(
        ["--model-path", "/m", "--no-such-flag", "1"],
        {},
        from_version="0.5.12",
        to_version="0.5.23",
        arch=None,
    )
    assert [change.old for change in translation.refused] == [("--no-such-flag", "1")]


def test_a_variable_the_target_does_not_read_is_dropped_with_the_reason():
    translation = translate(
        ["--model-path", "/m"],
        {"SGLANG_ENABLE_SPEC_V2": "1", "NCCL_P2P_DISABLE": "1"},
        from_version="0.5.12",
        to_version="0.5.23",
        arch="Qwen3ForCausalLM",
    )
    assert translation.new_env == {"NCCL_P2P_DISABLE": "1"}
    assert kinds(translation)[("SGLANG_ENABLE_SPEC_V2=1",)] == "removed"


def test_0511_requirement_is_added_for_a_hybrid_model_and_not_for_a_dense_one():
    hybrid = translate(
        NEXT, {}, from_version="0.5.9", to_version="0.5.11", arch="Qwen3NextForCausalLM"
    )
    assert hybrid.new_args[-2:] == ("--mamba-scheduler-strategy", "extra_buffer")
    assert hybrid.new_env == {"SGLANG_ENABLE_SPEC_V2": "1"}
    dense = translate(NEXT, {}, from_version="0.5.9", to_version="0.5.11", arch="Qwen3ForCausalLM")
    assert dense.new_args == tuple(NEXT) and dense.new_env == {}
    # radix cache off: 0.5.11's check does not apply
    off = translate(
        [*NEXT, "--disable-radix-cache"],
        {},
        from_version="0.5.9",
        to_version="0.5.11",
        arch="Qwen3NextForCausalLM",
    )
    assert off.ok and "--mamba-scheduler-strategy" not in off.new_args


def test_an_unread_architecture_is_refused_where_a_check_would_apply():
    """Unknown is not 'not hybrid': the requirement cannot be judged, so nothing runs."""
    translation = translate(NEXT, {}, from_version="0.5.9", to_version="0.5.11", arch=None)
    assert not translation.ok
    assert "config.json could not be read" in translation.refused[0].reason
