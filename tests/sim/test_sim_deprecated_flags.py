"""Deprecated flags warn exactly where a release's flag table says they are deprecated.

The tables come from each release's real parser (tools/gen_flag_table.py): 0.5.17 made
--cuda-graph-max-bs a DeprecatedAliasStoreAction of --cuda-graph-max-bs-decode; 0.5.9/0.5.11
take it as a plain flag; 0.5.23 has no such flag any more.
"""

from __future__ import annotations

import contextlib
import io

import pytest

from sglconsole.sim import flagtable

WARNING = (
    "\x1b[1;33m'--cuda-graph-max-bs' is deprecated and will be removed in a future release. "
    "Use '--cuda-graph-max-bs-decode' instead.\x1b[0m\n"
)


def _launch(version: str, *flags: str) -> tuple[str, dict | None]:
    parser = flagtable.build_parser(version)
    err = io.StringIO()
    with contextlib.redirect_stderr(err):
        try:
            args = vars(parser.parse_args(["--model-path", "m", *flags]))
        except SystemExit:
            args = None
    return err.getvalue(), args


def _kind(version: str, option: str) -> str | None:
    actions = flagtable.load_table(version)["actions"]
    return next((a["kind"] for a in actions if option in a["option_strings"]), None)


def test_0_5_17_warns_in_bold_yellow_and_keeps_the_value():
    err, args = _launch("0.5.17", "--cuda-graph-max-bs", "32")
    assert err == WARNING
    assert args["cuda_graph_max_bs_decode"] == 32


@pytest.mark.parametrize("version", flagtable.available_versions())
def test_only_a_release_whose_table_deprecates_it_warns(version):
    err, args = _launch(version, "--cuda-graph-max-bs", "32")
    kind = _kind(version, "--cuda-graph-max-bs")
    if kind is None:
        # gone: argparse refuses it (0.5.23: an ambiguous prefix of the -decode/-prefill flags)
        assert args is None and "error:" in err
    elif kind.startswith("custom:Deprecated"):
        assert err == WARNING
    else:
        assert err == "" and args["cuda_graph_max_bs"] == 32


def test_a_deprecated_flag_that_stores_nothing_keeps_its_default():
    err, args = _launch("0.5.17", "--prefill-round-robin-balance")
    assert "'--prefill-round-robin-balance' is deprecated" in err
    assert args["prefill_round_robin_balance"] is None
