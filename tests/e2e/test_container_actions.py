"""Container servers acted on end to end, over real sshd, against real Docker and real Podman:
capture writes a container profile; drift sees a tag re-imported to a new image id; restore runs
the proven image under sglang-PORT and keeps the old container for rollback; kill stops the
container and proves it; rollback starts the kept one again."""

from __future__ import annotations

import json

import yaml

from sglconsole.sim.fleet import engines
from sglconsole.sim.fleet.files import fill
from tests.cli import cli
from tests.containers import fresh_container_fleet  # noqa: F401


def _run(fleet, *args: str, timeout: float = 180):
    return cli(*args[:1], "-c", str(fleet.config_path), *args[1:], timeout=timeout)


def _containers(engine) -> dict[str, dict]:
    """Every container of the host's engine by name: its id, whether it runs, its image id."""
    listed = engine.run("ps", "-a", "-q", "--no-trunc").split()
    found = json.loads(engine.run("inspect", *listed)) if listed else []
    return {
        item["Name"].lstrip("/"): {
            "id": item["Id"],
            "running": item["State"]["Running"],
            "image": item["Image"]
            if item["Image"].startswith("sha256:")
            else "sha256:" + item["Image"],
        }
        for item in found
    }


def _use_profile(fleet, host: str, name: str) -> None:
    """hosts.yaml's server entry now names profile NAME (as an operator edits it)."""
    data = yaml.safe_load(fleet.config_path.read_text())
    data["hosts"][host]["servers"][0]["profile"] = name
    fleet.config_path.write_text(yaml.safe_dump(data, sort_keys=False))


def test_capture_drift_restore_kill_rollback_of_a_container(
    fresh_container_fleet, tmp_path, monkeypatch
):  # noqa: F811
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    fleet = fresh_container_fleet
    (host,) = fleet.hosts
    kind = fleet.hosts[host].spec.engines[0]
    engine = fleet.engine(host, kind)
    target = f"{host}:30000"
    before = _containers(engine)["sglang-30000"]

    # capture: the running container becomes a container profile (image tag and its id)
    captured = _run(fleet, "capture", target, "--as", "boxed")
    assert captured.returncode == 0, captured.stdout + captured.stderr
    profile = yaml.safe_load(fleet.config_path.read_text())["profiles"]["boxed"]
    assert profile["container"]["engine"] == kind
    assert profile["container"]["image"] == engines.image_name(engine)
    assert profile["container"]["image_id"] == before["image"]
    assert profile["container"]["options"]["shm-size"] == "32g"
    assert profile["container"]["options"]["restart"] == "unless-stopped"
    assert "--port" not in profile["args"]
    _use_profile(fleet, host, "boxed")

    # drift: the same container matches; the tag re-imported with new content is DRIFT
    same = _run(fleet, "diff", target, "--json")
    assert same.returncode == 0, same.stdout + same.stderr
    new_id = engines.build_image(engine, fleet.hosts[host].spec.sglang_version, marker="pulled")
    assert new_id != before["image"]
    # the running container still runs the proven image: what drifts is a container started from
    # the tag now; the guide's way (`run IMAGE:latest`) after a re-pull
    engine.run("rm", "-f", "sglang-30000")
    simulated = fleet.hosts[host]
    args = [fill(simulated, arg) for arg in simulated.spec.servers[0].running]
    engines.run_server(engine, "sglang-30000", args, gpus=[0])
    fleet.wait_ready(timeout=60)
    drifted = _run(fleet, "diff", target, "--json")
    assert drifted.returncode == 1, drifted.stdout + drifted.stderr
    rows = {row["dest"]: row for row in json.loads(drifted.stdout)[target]["container"]}
    assert rows["image_id"]["state"] == "DIFFERENT"
    assert "pulled (or built) again" in rows["image_id"]["note"]
    running = _containers(engine)["sglang-30000"]

    # restore: the proven image under the predictable name; the drifted one kept, stopped
    shown = _run(fleet, "restore", target, "--dry-run")
    assert shown.returncode == 0, shown.stdout + shown.stderr
    assert f"{kind} run -d --name sglang-30000" in shown.stdout
    assert before["image"] in shown.stdout
    restored = _run(fleet, "restore", target, "--yes", timeout=300)
    assert restored.returncode == 0, restored.stdout + restored.stderr
    now = _containers(engine)
    assert now["sglang-30000"]["running"] and now["sglang-30000"]["image"] == before["image"]
    kept = f"sglang-30000-was-{running['id'][:12]}"
    assert now[kept]["id"] == running["id"] and not now[kept]["running"]
    assert _run(fleet, "diff", target).returncode == 0  # the proven image again: no drift

    # kill: the container stopped (by id), proven, kept for rollback
    killed = _run(fleet, "kill", target, "--yes")
    assert killed.returncode == 0, killed.stdout + killed.stderr
    assert "port 30000 free" in killed.stdout
    after_kill = _containers(engine)
    restored_id = now["sglang-30000"]["id"]
    assert "sglang-30000" not in after_kill
    assert not after_kill[f"sglang-30000-was-{restored_id[:12]}"]["running"]

    # rollback: the kept container gets its name back and runs again
    rolled = _run(fleet, "rollback", target, "--yes", timeout=300)
    assert rolled.returncode == 0, rolled.stdout + rolled.stderr
    back = _containers(engine)
    assert back["sglang-30000"]["id"] == restored_id and back["sglang-30000"]["running"]
