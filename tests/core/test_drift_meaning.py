"""Drift by meaning over the shipped 0.5.23 flag table and the simulator's resolution of the same
launch (what its /server_info lists): `--dp-size N --enable-dp-attention` is `--attn-dp-size N`."""

from __future__ import annotations

from sglconsole.core import drift
from sglconsole.remote.drift import release_meaning
from sglconsole.remote.sglang_args import canonicalize_table
from sglconsole.sim.flagtable import build_parser
from sglconsole.sim.server.args_resolve import post_init

OLD_DP = ["--model-path", "m", "--tp-size", "4", "--dp-size", "4", "--enable-dp-attention"]
NEW_DP = ["--model-path", "m", "--tp-size", "4", "--attn-dp-size", "4"]


def resolved_by_sim(argv: list[str]) -> dict:
    """What the simulated 0.5.23 server's /server_info lists for this launch."""
    args = vars(build_parser("0.5.23").parse_args(argv))
    return post_init({**args, "max_running_requests": 64}, 64)


def report(profile: list[str], running: list[str], info: dict | None) -> drift.Report:
    verdict = canonicalize_table("0.5.23", {"profile": profile, "running": running})
    p, r = verdict.results["profile"], verdict.results["running"]
    assert p.error is None and r.error is None
    return drift.build(
        profile_values=p.values,
        profile_given=p.given,
        running_values=r.values,
        running_given=r.given,
        flag_of=verdict.flag_of,
        resolved=info,
        meaning=release_meaning("0.5.23"),
        defaults={dest: a.get("default") for dest, a in verdict.actions.items()},
    )


def rows(rep: drift.Report) -> dict[str, drift.Row]:
    return {row.name: row for row in rep.rows}


def test_the_simulator_resolves_the_old_dp_attention_spelling_like_sglang():
    info = resolved_by_sim(OLD_DP)
    assert (info["attn_dp_size"], info["dp_size"], info["enable_dp_attention"]) == (4, 1, True)
    assert resolved_by_sim(NEW_DP)["enable_dp_attention"] is True  # the compat field


def test_old_dp_attention_spelling_matches_attn_dp_size_by_the_deprecation_note():
    rep = report(NEW_DP, OLD_DP, None)
    assert not rep.differs, rep.summary
    found = rows(rep)
    assert found["attn_dp_size"].judged == "deprecation"
    assert found["enable_dp_attention"].running is True  # shown as launched
    assert found["dp_size"].running == 4 and found["dp_size"].state == drift.State.SAME


def test_with_server_info_the_resolved_values_judge_and_the_compat_field_is_no_drift():
    rep = report(NEW_DP, OLD_DP, resolved_by_sim(OLD_DP))
    assert not rep.differs, rep.summary
    found = rows(rep)
    assert found["attn_dp_size"].judged == "server_info"
    assert found["dp_size"].judged == "server_info"
    assert found["enable_dp_attention"].judged == "deprecation"


def test_a_different_attention_dp_width_still_drifts():
    profile = [*NEW_DP[:-1], "2"]
    rep = report(profile, OLD_DP, resolved_by_sim(OLD_DP))
    row = rows(rep)["attn_dp_size"]
    assert rep.differs and row.state == drift.State.DIFFERENT and row.judged == "server_info"


def test_an_explicit_per_phase_backend_wins_over_disable_cuda_graph():
    running = ["--model-path", "m", "--disable-cuda-graph", "--cuda-graph-backend-decode", "full"]
    info = resolved_by_sim(running)
    assert info["cuda_graph_config"]["decode"]["backend"] == "full"
    assert info["cuda_graph_config"]["prefill"]["backend"] == "disabled"
    profile = ["--model-path", "m", "--cuda-graph-backend-prefill", "disabled"]
    rep = report(profile, running, info)
    found = rows(rep)
    assert found["cuda_graph_backend_prefill"].state == drift.State.SAME
    assert found["cuda_graph_backend_decode"].state == drift.State.ONLY_RUNNING
