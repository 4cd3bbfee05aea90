"""The container's side of drift and of capture, pure, on the real inspect captures of both
engines (tests/data/containers/): a tag that names another image is DRIFT and says why; unset
options mean the engine's defaults; unknown is never a difference."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from sglconsole.actions.capture_container import container_block
from sglconsole.config.container_run import ContainerRun
from sglconsole.core.containers import image_index, parse_inspect
from sglconsole.core.drift import Report
from sglconsole.core.drift_container import (
    ContainerSide,
    compare_container,
    running_side,
    shm_bytes,
    shm_text,
)
from sglconsole.tui.codec import container_row

DATA = Path(__file__).parents[1] / "data" / "containers"


def _captured(name: str):
    engine = name.split("-", 1)[0]
    images = image_index((DATA / f"{engine}-image.json").read_text())
    text = (DATA / f"{name}.json").read_text()
    (info,) = parse_inspect(text, engine, images)
    return info, json.loads(text)[0]


def _profile_of(captured, **changes) -> ContainerSide:
    """The side a profile captured from (INFO, RAW) says (CHANGES: what was edited since)."""
    info, raw = captured
    block = container_block(info, raw)
    options = block.get("options", {})
    run = ContainerRun(
        engine=block["engine"],
        image=block["image"],
        image_id=block["image_id"],
        name="sglang-30000",
        gpus=info.options.gpus and tuple(int(gpu) for gpu in info.options.gpus),
        shm_size=options.get("shm-size"),
        ipc=options.get("ipc"),
        network=options.get("network", "host"),
        volumes=tuple(options.get("volumes", ())),
        restart=options.get("restart"),
    )
    return ContainerSide(**{**run.side().__dict__, **changes})


@pytest.fixture(params=["docker-host-network", "podman-host-network"])
def running(request):
    return _captured(request.param)


def test_a_captured_container_matches_its_own_profile(running):
    rows = compare_container(_profile_of(running), running_side(running[0], "0.5.23"))
    assert not [row for row in rows if row.differs], rows
    shown = {row.name: row for row in rows}
    assert shown["shm_size"].running == "32g" and shown["image_id"].note is None


def test_the_same_tag_naming_another_image_is_drift_and_says_so(running):
    proven = "sha256:" + "ab" * 32
    side = running_side(running[0], None)
    rows = compare_container(_profile_of(running, image_id=proven), side)
    changed = [row for row in rows if row.differs]
    assert [row.name for row in changed] == ["image_id"]  # the tag is the same: only its id
    assert "pulled (or built) again since" in changed[0].note
    assert Report(container=rows).differs and "image id" in Report(container=rows).summary


def test_behaviour_changing_run_options_differ_first():
    captured = _captured("docker-host-network")
    edited = _profile_of(captured, shm_bytes=shm_bytes("64g"), ipc=None, gpus=("0",))
    rows = compare_container(edited, running_side(captured[0], None))
    changed = [row.label for row in rows if row.differs]
    assert changed[:3] == ["--gpus", "--shm-size", "--ipc"]  # performance first
    assert rows[0].profile == "0" and rows[0].running == "0,1"


def test_an_unread_value_is_unknown_never_a_difference():
    side = ContainerSide(engine="docker", image="x:1", image_id="sha256:" + "1" * 64)
    rows = {row.name: row for row in compare_container(side, ContainerSide(engine="docker"))}
    assert not rows["image_id"].differs and "unknown" in rows["image_id"].note
    assert not rows["sglang_version"].differs


def test_a_profile_silent_on_containers_is_not_drift_but_a_container_profile_run_bare_is():
    info, raw = _captured("docker-host-network")
    (row,) = compare_container(None, running_side(info, None))
    assert not row.differs and row.running == "a docker container"
    assert "a relaunch would start a process on the host" in row.note
    (row,) = compare_container(_profile_of((info, raw)), None)
    assert row.differs and row.running == "a process on the host"


def test_capture_writes_what_changes_behaviour_and_nothing_of_the_image():
    info, raw = _captured("docker-guide")
    block = container_block(info, raw)
    assert block["image"] == "simsglang:latest" and block["image_id"].startswith("sha256:")
    assert block["options"]["shm-size"] == "32g" and block["options"]["ipc"] == "host"
    assert block["options"]["network"] == "bridge"  # docker's "default": published with -p
    assert "gpus" not in block["options"]  # the server entry's


def test_sizes_read_as_the_engines_do():
    assert shm_bytes("32g") == 32 * 1024**3 and shm_text(shm_bytes("512m")) == "512m"
    assert shm_bytes("lots") is None and shm_text(None) is None


def test_a_recorded_row_reads_back_the_same():
    captured = _captured("podman-host-network")
    edited = _profile_of(captured, image_id="sha256:" + "cd" * 32)
    rows = compare_container(edited, running_side(captured[0], "0.5.23"))
    assert [container_row(row.to_dict()) for row in rows] == rows
