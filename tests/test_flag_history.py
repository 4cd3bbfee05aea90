"""Removal notes read from the shipped flag tables: written to hold whatever releases have a
table (exact release once every release has one)."""

from __future__ import annotations

from sglconsole.config.flag_history import explain, removed_flag
from sglconsole.config.flag_tables import available_versions


def test_a_retired_value_is_named_with_what_sglang_itself_says_of_it():
    error = (
        "sglang serve: error: argument --cuda-graph-backend-prefill: invalid choice: 'tc_piecewise'"
    )
    [note] = explain(error, "0.5.23")
    assert note.startswith(
        "value 'tc_piecewise' of `--cuda-graph-backend-prefill` was removed in SGLang 0.5.22"
        " (last in 0.5.21)"
    )
    assert (  # the release that removed it says so in its own choices' help
        "SGLang 0.5.22 says: tc_piecewise was removed; select breakable, full, or disabled" in note
    )


def test_removal_is_the_first_table_without_the_flag_after_one_with_it():
    removal = removed_flag("--stream-output", "0.5.23")
    versions = available_versions()
    later = versions[versions.index(removal.last_in) + 1]
    assert removal.removed_in == later
    assert removal.replacement == "--incremental-streaming-output"
    assert removal.exact == (
        removal.sentence().startswith(f"`--stream-output` was removed in SGLang {later} ")
    )


def test_a_flag_no_table_ever_had_gets_no_removal_note():
    assert removed_flag("--speculative-algoritm", "0.5.23") is None
    assert explain("error: unrecognized arguments: --speculative-algoritm", "0.5.23") == []


def test_a_deprecation_note_that_names_no_flag_is_quoted_not_guessed():
    removal = removed_flag("--collect-tokens-histogram", "0.5.23")
    assert removal.replacement is None
    assert "Token histograms are now automatically collected" in removal.sentence()
