"""The environment tables shipped in sglconsole/data/envs/ (tools/gen_env_table.py), and what
they say about SGLANG_ENABLE_SPEC_V2 across releases (read straight from each wheel's
sglang/srt/environ.py when the wheels are at hand)."""

from __future__ import annotations

import ast
import json
import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from sglconsole.core.env_registry import Effect, EnvRegistry, judge, same_as_default
from tests.conftest import REPO

TABLES = REPO / "sglconsole" / "data" / "envs"
TOOL = REPO / "tools" / "gen_env_table.py"
# regenerating one release reads its whole wheel (~15 s): the story's releases by default,
# every shipped table with SGLCONSOLE_ENV_TABLES_ALL=1
STORY = ("0.5.11", "0.5.12", "0.5.23")


def wheel_folder() -> Path | None:
    for folder in (os.environ.get("SGLCONSOLE_SGLANG_WHEELS"), REPO / ".cache" / "sglang-wheels"):
        if folder and Path(folder).is_dir():
            return Path(folder)
    return None


def table(version: str) -> dict:
    return json.loads((TABLES / f"sglang-{version}.json").read_text())


def registry(version: str) -> EnvRegistry:
    return EnvRegistry.from_dict(table(version), version=version, source="test")


def shipped() -> list[str]:
    return sorted(p.stem.removeprefix("sglang-") for p in TABLES.glob("sglang-*.json"))


def test_every_release_0_5_9_to_0_5_23_has_a_table():
    assert {f"0.5.{n}" for n in range(9, 24)} <= set(shipped())
    for version in shipped():
        data = table(version)
        assert data["sglang_version"] == version
        assert data["generated_by"] == "tools/gen_env_table.py"
        assert data["wheel"].startswith(f"sglang-{version}-") and data["vars"]


def test_spec_v2_is_on_by_default_in_0_5_12_and_gone_in_0_5_23():
    assert table("0.5.12")["vars"]["SGLANG_ENABLE_SPEC_V2"] == {
        "kind": "EnvBool",
        "default": "True",
    }
    assert table("0.5.9")["vars"]["SGLANG_ENABLE_SPEC_V2"]["default"] == "False"
    new = table("0.5.23")
    assert "SGLANG_ENABLE_SPEC_V2" not in new["vars"]
    assert "SGLANG_ENABLE_SPEC_V2" not in new["read_elsewhere"]
    assert "SGLANG_ENABLE_SPEC_V2" not in new["deprecated"]
    # 0.5.14 removed it from the registry but still reads it, only to say it was removed
    hook = ["sglang/srt/arg_groups/speculative_hook.py"]
    for release in ("0.5.14", "0.5.17", "0.5.20"):
        assert table(release)["read_elsewhere"]["SGLANG_ENABLE_SPEC_V2"] == hook
        assert table(release)["read_only_to_warn"]["SGLANG_ENABLE_SPEC_V2"] == hook
    warned = judge(registry("0.5.17"), "SGLANG_ENABLE_SPEC_V2")
    assert warned.effect == Effect.NO_EFFECT and "reads it only to warn it is gone" in warned.note


def test_the_registry_judges_spec_v2_per_release():
    assert judge(registry("0.5.12"), "SGLANG_ENABLE_SPEC_V2").effect == Effect.KNOWN
    assert same_as_default(registry("0.5.12"), "SGLANG_ENABLE_SPEC_V2", "1") is True
    assert same_as_default(registry("0.5.12"), "SGLANG_ENABLE_SPEC_V2", "0") is None
    assert same_as_default(registry("0.5.9"), "SGLANG_ENABLE_SPEC_V2", "1") is None
    gone = judge(registry("0.5.23"), "SGLANG_ENABLE_SPEC_V2")
    assert gone.effect == Effect.NO_EFFECT
    assert gone.note == "no effect here (SGLang 0.5.23 does not read it)"


def test_aliases_deprecations_and_the_sgl_prefix():
    new = registry("0.5.23")
    old_name = "SGLANG_OPT_SWA_RELEASE_LEAF_LOCK_AFTER_WINDOW"
    assert new.aliases[old_name] == "SGLANG_OPT_RELEASE_PREFILL_SWA"
    assert judge(new, old_name).target == "SGLANG_OPT_RELEASE_PREFILL_SWA"
    removed = judge(new, "SGLANG_ENABLE_CP_V2")  # _DEPRECATED_ENVS, no replacement
    assert removed.effect == Effect.NO_EFFECT and "deprecated in SGLang 0.5.23" in removed.note
    assert new.sgl_rewrite
    assert judge(new, "SGL_IS_IN_CI").note == "SGLang 0.5.23 reads it as SGLANG_IS_IN_CI"
    moved = judge(registry("0.5.12"), "SGLANG_ENABLE_THINKING")  # _print_deprecated_env
    assert moved.effect == Effect.DEPRECATED and moved.target == "SGLANG_DEFAULT_THINKING"


def test_an_unpacked_folder_reads_as_its_wheel(tmp_path):
    folder = wheel_folder()
    wheels = sorted(folder.glob("sglang-0.5.12-*.whl")) if folder else []
    if not wheels:
        pytest.skip("no sglang-0.5.12 wheel (.cache/sglang-wheels/ or $SGLCONSOLE_SGLANG_WHEELS)")
    with zipfile.ZipFile(wheels[0]) as wheel:
        wheel.extract("sglang/srt/environ.py", tmp_path / "src")
    out = tmp_path / "out.json"
    done = subprocess.run(
        [sys.executable, str(TOOL), str(tmp_path / "src"), str(out)], capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    data = json.loads(out.read_text())
    assert data["vars"] == table("0.5.12")["vars"] and data["wheel"] is None


def test_bad_input_gets_a_clear_error(tmp_path):
    done = subprocess.run(
        [sys.executable, str(TOOL), str(tmp_path), str(tmp_path / "out.json")],
        capture_output=True,
        text=True,
    )
    assert done.returncode == 1 and "no sglang/srt/environ.py" in done.stderr


@pytest.mark.parametrize(
    "version", shipped() if os.environ.get("SGLCONSOLE_ENV_TABLES_ALL") else STORY
)
def test_the_checked_in_table_matches_regeneration(version, tmp_path):
    folder = wheel_folder()
    if folder is None:
        pytest.skip("no SGLang wheels (.cache/sglang-wheels/ or $SGLCONSOLE_SGLANG_WHEELS)")
    wheels = sorted(folder.glob(f"sglang-{version}-*.whl"))
    if not wheels:
        pytest.skip(f"no sglang-{version} wheel in {folder}")
    out = tmp_path / f"sglang-{version}.json"
    done = subprocess.run(
        [sys.executable, str(TOOL), str(wheels[0]), str(out)], capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    assert out.read_text() == (TABLES / f"sglang-{version}.json").read_text()


def test_the_host_check_stays_python_3_6_and_reads_what_the_tool_writes(tmp_path):
    """The registry reader runs inside the host parser check on the host's python3 (3.6+):
    3.6 syntax, and on a release's environ.py it finds the tool's facts."""
    import ast as std_ast

    from sglconsole.remote.agents import source
    from sglconsole.remote.sglang_args import SNIPPET

    std_ast.parse(SNIPPET, feature_version=(3, 6))
    folder = wheel_folder()
    wheels = sorted(folder.glob("sglang-0.5.12-*.whl")) if folder else []
    if not wheels:
        pytest.skip("no sglang-0.5.12 wheel (.cache/sglang-wheels/ or $SGLCONSOLE_SGLANG_WHEELS)")
    with zipfile.ZipFile(wheels[0]) as wheel:
        wheel.extract("sglang/srt/environ.py", tmp_path)
    namespace: dict = {}
    exec(compile(source("env_registry_reader"), "reader", "exec"), namespace)
    read = namespace["read_env_registry"](str(tmp_path / "sglang"))
    expected = table("0.5.12")
    assert {k: v[1] for k, v in read["vars"].items()} == {
        k: v["default"] for k, v in expected["vars"].items()
    }
    assert set(read["deprecated"]) == set(expected["deprecated"]) and read["sgl_prefix_rewrite"]


def test_which_registry_judges():
    """The host's own source first, then the table shipped for that version, else none (then
    SGLANG_* variables are compared by value, as before) — and the report says which."""
    from sglconsole.remote.drift import env_registry
    from sglconsole.remote.sglang_args import Verdict

    host = {"path": "/x/sglang/srt/environ.py", "vars": {"SGLANG_A": ["EnvBool", "False"]}}
    on_host, said = env_registry(Verdict(True, "0.5.23", "py", {}, {}, env_registry=host), "0.5.23")
    assert list(on_host.variables) == ["SGLANG_A"] and "/x/sglang/srt/environ.py" in said
    shipped, said = env_registry(Verdict(True, "0.5.23", "py", {}, {}), "0.5.23")
    assert len(shipped.variables) == len(table("0.5.23")["vars"]) and "shipped" in said
    none, said = env_registry(Verdict(True, "0.4.0", "py", {}, {}), "0.4.0")
    assert none is None and "compared by value" in said


def test_a_read_that_only_decides_a_warning_is_told_apart_from_a_real_one():
    from sglconsole.remote.agents.env_warn_only import reads_by_name

    source = """
import os, warnings
if os.getenv("SGLANG_GONE") is not None:
    logger.warning("SGLANG_GONE has been removed")
if "SGLANG_ALSO_GONE" in os.environ:
    warnings.warn("removed", FutureWarning)
if os.getenv("SGLANG_USED"):
    enable_it()
if os.environ.get("SGLANG_BRANCHED"):
    logger.info("on")
else:
    turn_off()
if os.getenv("SGLANG_TWICE") is not None:
    print("gone")
speed = int(os.getenv("SGLANG_TWICE", "1"))
"""
    assert reads_by_name(ast.parse(source)) == {
        "SGLANG_GONE": True,
        "SGLANG_ALSO_GONE": True,
        "SGLANG_USED": False,
        "SGLANG_BRANCHED": False,
        "SGLANG_TWICE": False,
    }
    # it runs on the host's python3 too
    agent = REPO / "sglconsole" / "remote" / "agents" / "env_warn_only.py"
    ast.parse(agent.read_text(), feature_version=(3, 6))
