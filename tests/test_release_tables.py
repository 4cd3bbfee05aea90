"""One table per SGLang release, generated from that release's own wheel, checked.

Every release from the oldest shipped to the newest has a flag table
(sglconsole/data/flags/) and a simulator version table (sglconsole/sim/versions/).
Where the release's wheel is at hand (.cache/sglang-wheels/ or $SGLCONSOLE_SGLANG_WHEELS)
the version table is regenerated from it (AST only, seconds) and must equal the checked-in
one; the flag table too where the 0.5.23 real-SGLang venv exists (tools/real_sglang_venv.sh),
for the oldest and the newest release, or the ones $SGLCONSOLE_CHECK_FLAG_TABLES names
("all", or versions separated by commas: tools/add_sglang_release.sh names the one it adds).
Otherwise those checks skip and say why.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
FLAGS = REPO / "sglconsole" / "data" / "flags"
VERSIONS = REPO / "sglconsole" / "sim" / "versions"
TOOLS = REPO / "tools"
WHEELS = Path(os.environ.get("SGLCONSOLE_SGLANG_WHEELS") or REPO / ".cache" / "sglang-wheels")
BASE_PYTHON = Path(
    os.environ.get("SGLCONSOLE_REAL_SGLANG_PYTHON")
    or REPO / ".cache" / "real-sglang-0.5.23" / "bin" / "python"
)


def _key(version: str) -> tuple[int, ...]:
    return tuple(int(part) for part in version.split("."))


def _versions(folder: Path) -> list[str]:
    return sorted((p.stem.removeprefix("sglang-") for p in folder.glob("sglang-*.json")), key=_key)


RELEASES = _versions(FLAGS)


def _wheel(version: str) -> Path:
    found = sorted(WHEELS.glob(f"sglang-{version}-*.whl"))
    if not found:
        pytest.skip(
            f"no wheel of SGLang {version} in {WHEELS}: tools/sglang_wheels.py fetch {version}"
        )
    return found[0]


def _tool(*args: str, python: str = sys.executable) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    return subprocess.run(
        [python, *args], capture_output=True, text=True, timeout=600, env=env, cwd=REPO
    )


def _unpack(version: str) -> tuple[Path, str]:
    _wheel(version)
    unpacked = _tool(str(TOOLS / "sglang_wheels.py"), "unpack", version)
    assert unpacked.returncode == 0, unpacked.stderr
    origin = _tool(str(TOOLS / "sglang_wheels.py"), "origin", version)
    assert origin.returncode == 0, origin.stderr
    return Path(unpacked.stdout.strip()), origin.stdout.strip()


def test_every_release_from_the_oldest_to_the_newest_has_both_tables():
    assert _versions(VERSIONS) == RELEASES
    series: dict[tuple[int, ...], list[int]] = {}
    for version in RELEASES:
        series.setdefault(_key(version)[:2], []).append(_key(version)[2])
    for minor, patches in series.items():
        # no release left out inside a series (0.5.9 is the oldest the console knows)
        assert patches == list(range(patches[0], patches[-1] + 1)), (minor, patches)
    assert RELEASES[0] == "0.5.9" and _key(RELEASES[-1]) >= (0, 5, 23)


@pytest.mark.parametrize("version", RELEASES)
def test_each_table_is_its_release_and_names_the_wheel_it_came_from(version):
    flags = json.loads((FLAGS / f"sglang-{version}.json").read_text())
    sim = json.loads((VERSIONS / f"sglang-{version}.json").read_text())
    assert flags["sglang_version"] == sim["sglang_version"] == version
    assert flags["generated_by"] == "tools/gen_flag_table.py"
    assert sim["generated_by"] == "tools/gen_sim_version_table.py"
    wheel = f"PyPI wheel sglang-{version}-"
    assert sim["source"]["origin"].startswith(wheel)
    assert flags["environment"].startswith(wheel)
    assert "tools/gen_flag_table_overlay.sh" in flags["environment"]
    # the stand-ins are named, and none of their values leaked into the table
    assert isinstance(flags["stubbed_modules"], list)
    for name in flags["stubbed_modules"]:
        assert name in flags["environment"]
    assert "SGLCONSOLE_STAND_IN" not in json.dumps(flags["actions"])
    assert flags["num_actions"] == len(flags["actions"])


@pytest.mark.parametrize("version", RELEASES)
def test_the_version_table_is_what_its_wheel_says(version, tmp_path):
    src, origin = _unpack(version)
    out = tmp_path / f"sglang-{version}.json"
    made = _tool(str(TOOLS / "gen_sim_version_table.py"), str(src), str(out), "--origin", origin)
    assert made.returncode == 0, made.stderr
    checked_in = json.loads((VERSIONS / f"sglang-{version}.json").read_text())
    regenerated = json.loads(out.read_text())
    differ = sorted(
        k for k in checked_in.keys() | regenerated.keys() if checked_in.get(k) != regenerated.get(k)
    )
    assert not differ, (
        f"sglconsole/sim/versions/sglang-{version}.json differs in {differ}:"
        f" run tools/add_sglang_release.sh {version}"
    )


@pytest.mark.parametrize("version", RELEASES)
def test_the_server_args_checks_are_what_its_wheel_says(version, tmp_path):
    src, origin = _unpack(version)
    out = tmp_path / f"sglang-{version}.json"
    made = _tool(str(TOOLS / "gen_server_args_checks.py"), str(src), str(out), "--origin", origin)
    assert made.returncode == 0, made.stderr
    checked_in = REPO / "sglconsole" / "data" / "checks" / f"sglang-{version}.json"
    assert json.loads(checked_in.read_text()) == json.loads(out.read_text()), (
        f"{checked_in} differs: run tools/add_sglang_release.sh {version}"
    )


def test_every_release_has_its_server_args_checks():
    assert _versions(REPO / "sglconsole" / "data" / "checks") == RELEASES


def _flag_check_wanted(version: str) -> bool:
    wanted = os.environ.get("SGLCONSOLE_CHECK_FLAG_TABLES", "")
    if wanted == "all" or version in wanted.split(","):
        return True
    return not wanted and version in (RELEASES[0], RELEASES[-1])


@pytest.mark.parametrize("version", RELEASES)
def test_the_flag_table_is_what_its_release_parser_says(version, tmp_path):
    if not _flag_check_wanted(version):
        pytest.skip("set SGLCONSOLE_CHECK_FLAG_TABLES=all (or this version) to regenerate it")
    if not BASE_PYTHON.exists():
        pytest.skip(f"no real-SGLang venv ({BASE_PYTHON}): tools/real_sglang_venv.sh builds it")
    src, origin = _unpack(version)
    out = tmp_path / f"sglang-{version}.json"
    script = str(TOOLS / "real_sglang_overlay" / "flag_table.py")
    made = _tool(script, str(src), str(out), "--origin", origin, python=str(BASE_PYTHON))
    assert made.returncode == 0, made.stderr[-3000:]
    checked_in = json.loads((FLAGS / f"sglang-{version}.json").read_text())
    regenerated = json.loads(out.read_text())
    assert regenerated == checked_in, (
        f"sglconsole/data/flags/sglang-{version}.json is not what {origin} says:"
        f" run tools/add_sglang_release.sh {version}"
    )
