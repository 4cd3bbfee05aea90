"""The environment is compared by what changes SGLang's behaviour, on the real H200 capture: the
variables NVIDIA's CUDA image bakes in (NCCL_VERSION, CUDA_VERSION, ...) are shown apart, never
drift, so a server started by hand exactly as its profile is not DRIFT."""

from __future__ import annotations

import re

from sglconsole.core import drift
from tests.conftest import REPO

CAPTURE = REPO / "tests" / "fixtures" / "real-sglang-0.5.12-h200"  # copied unchanged from shared/


def main_process_environ() -> dict[str, str]:
    """The main server process's environment as captured (procs.txt, 'environ (selected)' of
    pid 521)."""
    text = (CAPTURE / "under-load" / "procs.txt").read_text()
    block = text.split("== pid 521 ", 1)[1]
    line = next(x for x in block.splitlines() if x.startswith("environ (selected): "))
    return dict(pair.split("=", 1) for pair in re.findall(r"\S+=\S*", line.split(": ", 1)[1]))


def build(profile_env: dict, running_env: dict) -> drift.Report:
    return drift.build(
        profile_values={},
        profile_given=set(),
        running_values={},
        running_given=set(),
        flag_of=lambda d: d,
        profile_env=profile_env,
        running_env=running_env,
        gpus=[0],
    )


def test_an_exact_launch_in_a_cuda_image_is_not_drift():
    env = main_process_environ()
    assert (
        env["NCCL_VERSION"] == "2.28.3-1" and env["CUDA_VERSION"] == "13.0.2"
    )  # what the image baked in
    report = build({}, env)
    assert not report.differs, [r.to_dict() for r in report.differences]
    assert {"NCCL_VERSION", "CUDA_VERSION"} <= set(report.ambient)
    assert report.build["TORCH_CUDA_ARCH_LIST"] == "9.0a"  # its own group, not ambient
    assert "NCCL_VERSION=2.28.3-1" in report.ambient_line()


def test_tuning_variables_still_drift():
    env = {**main_process_environ(), "NCCL_P2P_DISABLE": "1", "SGLANG_ENABLE_SPEC_V2": "1"}
    report = build({"SGLANG_ENABLE_SPEC_V2": "0"}, env)
    states = {r.name: r.state for r in report.differences}
    assert states == {
        "NCCL_P2P_DISABLE": drift.State.ONLY_RUNNING,
        "SGLANG_ENABLE_SPEC_V2": drift.State.DIFFERENT,
    }
    assert "NCCL_P2P_DISABLE" not in report.ambient


def test_what_the_profile_sets_is_compared_whatever_its_name():
    report = build(
        {"MY_FLAG": "1"},
        {"MY_FLAG": "2", "NV_LIBCUBLAS_VERSION": "13.0", "CUDA_VISIBLE_DEVICES": "0"},
    )
    assert [r.name for r in report.differences] == ["MY_FLAG"] and report.ambient == {
        "NV_LIBCUBLAS_VERSION": "13.0"
    }


CAPTURE_17 = REPO / "tests" / "fixtures" / "real-sglang-0.5.17-h200"  # copied from shared/
NAME = re.compile(r" (?=[A-Z][A-Z0-9_]*=)")  # values hold spaces (NVIDIA_REQUIRE_CUDA), names not


def environ_0_5_17() -> dict[str, str]:
    """The 0.5.17 server's environment (procs.txt of idle/, the main process, pid 552)."""
    text = (CAPTURE_17 / "idle" / "procs.txt").read_text()
    block = text.split("== pid 552 ", 1)[1]
    line = next(x for x in block.splitlines() if x.startswith("environ (selected): "))
    return dict(pair.split("=", 1) for pair in NAME.split(line.split(": ", 1)[1].strip()))


def test_build_variables_are_their_own_group_and_drift_only_where_the_profile_sets_them():
    """TORCH_CUDA_ARCH_LIST and CUDA_HOME decide which kernels a start JIT-builds (the same
    profile over SSH re-ran a 30 s JIT a hand launch had cached): never hidden as ambient."""
    env = environ_0_5_17()
    report = build({}, env)
    assert not report.differs, [r.to_dict() for r in report.differences]
    assert report.build == {
        "CUDAHOSTCXX": "/opt/gcc/bin/g++",
        "CUDA_HOME": "/usr/local/cuda",
        "TORCH_CUDA_ARCH_LIST": "9.0a",
    }
    assert not set(report.build) & set(report.ambient)
    assert "TORCH_CUDA_ARCH_LIST=9.0a" in report.build_line()
    assert "TORCH_CUDA_ARCH_LIST" not in report.ambient_line()
    assert report.to_dict()["build_env"]["CUDA_HOME"] == "/usr/local/cuda"
    pinned = build({"TORCH_CUDA_ARCH_LIST": "9.0"}, env)
    assert [(r.name, r.state) for r in pinned.differences] == [
        ("TORCH_CUDA_ARCH_LIST", drift.State.DIFFERENT)
    ]
    assert "TORCH_CUDA_ARCH_LIST" not in pinned.build


def test_the_2_kb_nvidia_require_cuda_is_shortened_where_shown():
    env = environ_0_5_17()
    whole = env["NVIDIA_REQUIRE_CUDA"]
    assert len(whole) > 2000 and whole.startswith("cuda>=13.0 brand=")
    report = build({}, env)
    line = report.ambient_line()
    assert whole not in line and f"[{len(whole):,} chars, cut]" in line
    shown = report.to_dict()["ambient_env"]["NVIDIA_REQUIRE_CUDA"]
    assert (
        len(shown) <= 160 and shown.startswith("cuda>=13.0 brand=") and shown.endswith(whole[-20:])
    )
    assert report.to_dict()["cut_env"] == {"NVIDIA_REQUIRE_CUDA": len(whole)}
    # a profile that sets it: the compared row is cut the same way
    row = build({"NVIDIA_REQUIRE_CUDA": "cuda>=12.0"}, env).differences[0].to_dict()
    assert row["dest"] == "NVIDIA_REQUIRE_CUDA" and len(row["running"]) <= 160


def test_sglang_variables_are_judged_by_the_release_registry():
    """SGLANG_ENABLE_SPEC_V2 against SGLang's own tables (data/envs/): not read by 0.5.23 (no
    effect, not drift), read by 0.5.12 with default True (unset = 1; 0 drifts)."""
    from sglconsole.config.env_tables import shipped_registry

    def report(version: str, profile_env: dict, running_env: dict) -> drift.Report:
        return drift.build(
            profile_values={},
            profile_given=set(),
            running_values={},
            running_given=set(),
            flag_of=lambda d: d,
            profile_env=profile_env,
            running_env={**running_env, "CUDA_VISIBLE_DEVICES": "0"},
            gpus=[0],
            env_registry=shipped_registry(version),
        )

    new = report("0.5.23", {"SGLANG_ENABLE_SPEC_V2": "1"}, {"SGLANG_FOO_UNKNOWN": "1"})
    assert not new.differs
    states = {row.name: row.state for row in new.rows if row.kind == "env"}
    assert states["SGLANG_ENABLE_SPEC_V2"] == drift.State.NO_EFFECT
    assert states["SGLANG_FOO_UNKNOWN"] == drift.State.NO_EFFECT
    assert "env table of SGLang 0.5.23 shipped" in new.note_lines()[0]
    assert not report("0.5.12", {"SGLANG_ENABLE_SPEC_V2": "1"}, {}).differs
    off = report("0.5.12", {"SGLANG_ENABLE_SPEC_V2": "1"}, {"SGLANG_ENABLE_SPEC_V2": "0"})
    assert [r.name for r in off.differences] == ["SGLANG_ENABLE_SPEC_V2"]
    spelled = report("0.5.12", {"SGLANG_ENABLE_SPEC_V2": "true"}, {"SGLANG_ENABLE_SPEC_V2": "1"})
    assert not spelled.differs  # EnvBool reads both as True
    # no registry (a release sglconsole has no table for): compared by value, as before
    assert report("0.4.0", {"SGLANG_ENABLE_SPEC_V2": "1"}, {}).differs
