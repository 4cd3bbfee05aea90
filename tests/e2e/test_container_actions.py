"""Container servers acted on end to end, over real sshd, against real Docker and real Podman
(tests/containers.py): capture writes a container profile from the engine's inspect; drift sees
the tag re-imported to a new image id; restore runs the proven image under sglang-PORT and keeps
the old container, stopped, for rollback; kill stops the container by id and proves it; rollback
starts the kept one again."""

from __future__ import annotations

import json
import time

import yaml

from sglconsole.sim.fleet import engines
from sglconsole.sim.fleet.files import fill
from tests.cli import cli
from tests.containers import fresh_container_fleet  # noqa: F401 - the fixture


def _run(fleet, *args: str, timeout: float = 300):
    return cli(*args[:1], "-c", str(fleet.config_path), *args[1:], timeout=timeout)


def _containers(engine) -> dict[str, dict]:
    """Every container of the host's engine by name: its id, whether it runs, its image id."""
    listed = engine.run("ps", "-a", "-q", "--no-trunc").split()
    found = json.loads(engine.run("inspect", *listed)) if listed else []
    return {
        item["Name"].lstrip("/"): {
            "id": item["Id"],
            "running": item["State"]["Running"],
            "image": "sha256:" + item["Image"].removeprefix("sha256:"),
        }
        for item in found
    }


def _captured(fleet, monkeypatch, tmp_path):
    """The fleet's container server captured as profile `boxed`, and its entry using it (as an
    operator edits hosts.yaml): (host, engine, target, the container as it was)."""
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    (host,) = fleet.hosts
    engine = fleet.engine(host, fleet.hosts[host].spec.engines[0])
    target = f"{host}:30000"
    before = _containers(engine)["sglang-30000"]
    captured = _run(fleet, "capture", target, "--as", "boxed")
    assert captured.returncode == 0, captured.stdout + captured.stderr
    data = yaml.safe_load(fleet.config_path.read_text())
    data["hosts"][host]["servers"][0]["profile"] = "boxed"
    fleet.config_path.write_text(yaml.safe_dump(data, sort_keys=False))
    return host, engine, target, before


def _repulled(fleet, host: str, engine) -> str:
    """The tag re-imported with new content (a re-pull to a new image id), and the server's
    container started again from the tag, the guide's way: the new container's id."""
    simulated = fleet.hosts[host]
    engines.build_image(engine, simulated.spec.sglang_version, marker="pulled again")
    engine.run("rm", "-f", "sglang-30000")
    args = [fill(simulated, arg) for arg in simulated.spec.servers[0].running]
    started = engines.run_server(engine, "sglang-30000", args, gpus=[0])
    fleet.wait_ready(timeout=60)
    return started


def test_capture_writes_a_container_profile_and_drift_sees_a_re_pulled_tag(
    fresh_container_fleet,  # noqa: F811 - the fixture imported above
    tmp_path,
    monkeypatch,
):
    fleet = fresh_container_fleet
    host, engine, target, before = _captured(fleet, monkeypatch, tmp_path)
    profile = yaml.safe_load(fleet.config_path.read_text())["profiles"]["boxed"]
    boxed = profile["container"]
    assert (boxed["engine"], boxed["image"]) == (engine.kind, engines.image_name(engine))
    assert boxed["image_id"] == before["image"]  # the proven image itself, not only its tag
    assert boxed["options"]["shm-size"] == "32g" and boxed["options"]["pid"] == "host"
    assert boxed["options"]["restart"] == "unless-stopped"
    assert boxed["options"]["gpus_as"] == "env"  # NVIDIA_VISIBLE_DEVICES, as it was run
    assert "--port" not in profile["args"] and profile["python"].endswith("python3")

    same = _run(fleet, "diff", target, "--json")
    assert same.returncode == 0, same.stdout + same.stderr
    rows = {row["dest"]: row for row in json.loads(same.stdout)[target]["container"]}
    assert rows["image_id"]["state"] == "SAME" and rows["shm_size"]["running"] == "32g"

    status = json.loads(_run(fleet, "status", "--json").stdout)
    assert status["hosts"][host]["servers"][0]["status"] == "UP"
    _repulled(fleet, host, engine)
    drifted = _run(fleet, "diff", target, "--json")
    assert drifted.returncode == 1, drifted.stdout + drifted.stderr
    rows = {row["dest"]: row for row in json.loads(drifted.stdout)[target]["container"]}
    assert rows["image_id"]["state"] == "DIFFERENT"
    assert rows["image"]["state"] == "SAME"  # the same tag: only its id says it changed
    assert "pulled (or built) again" in rows["image_id"]["note"]
    shown = _run(fleet, "diff", target)  # the container's table, apart from SGLang's flags
    assert "image id" in shown.stdout and "container" in shown.stdout
    status = json.loads(_run(fleet, "status", "--json").stdout)  # the monitor's drift feed
    (server,) = status["hosts"][host]["servers"]
    # all of it when it fails (a fresh clone once saw it DOWN, with no process, once)
    said = json.dumps(status["hosts"][host], indent=1)[:6000]
    assert server["status"] == "DRIFT" and server["drift_count"] == 1, said
    assert server["reason"].startswith("image id: "), server


def test_restore_runs_the_proven_image_and_rollback_brings_back_the_kept_container(
    fresh_container_fleet,  # noqa: F811 - the fixture imported above
    tmp_path,
    monkeypatch,
):
    fleet = fresh_container_fleet
    host, engine, target, before = _captured(fleet, monkeypatch, tmp_path)
    drifted_id = _repulled(fleet, host, engine)

    shown = _run(fleet, "restore", target, "--dry-run")
    assert shown.returncode == 0, shown.stdout + shown.stderr
    assert f"{engine.kind} run -d --name sglang-30000" in shown.stdout
    assert before["image"] in shown.stdout  # exactly what will run: the proven image
    assert _containers(engine)["sglang-30000"]["id"] == drifted_id  # nothing was touched

    restored = _run(fleet, "restore", target, "--yes")
    assert restored.returncode == 0, restored.stdout + restored.stderr
    assert "the probe: " in restored.stdout and "tok/s per request" in restored.stdout
    now = _containers(engine)
    assert now["sglang-30000"]["running"] and now["sglang-30000"]["image"] == before["image"]
    kept = f"sglang-30000-was-{drifted_id[:12]}"
    assert now[kept]["id"] == drifted_id and not now[kept]["running"]
    assert _run(fleet, "diff", target).returncode == 0  # the proven image again: no drift

    rolled = _run(fleet, "rollback", target, "--yes")
    assert rolled.returncode == 0, rolled.stdout + rolled.stderr
    back = _containers(engine)
    assert back["sglang-30000"]["id"] == drifted_id and back["sglang-30000"]["running"]
    restored_id = now["sglang-30000"]["id"]
    assert not back[f"sglang-30000-was-{restored_id[:12]}"]["running"]  # kept in turn
    assert _run(fleet, "diff", target).returncode == 1  # what ran before: the re-pulled image

    # restored again and proven: one container stays kept for rollback, the older one goes
    again = _run(fleet, "restore", target, "--yes")
    assert again.returncode == 0, again.stdout + again.stderr
    assert f"removed sglang-30000-was-{restored_id[:12]}" in again.stdout
    final = _containers(engine)
    assert f"sglang-30000-was-{restored_id[:12]}" not in final
    assert not final[f"sglang-30000-was-{drifted_id[:12]}"]["running"]


def test_kill_stops_the_container_by_id_proves_it_and_rollback_starts_it_again(
    fresh_container_fleet,  # noqa: F811 - the fixture imported above
    tmp_path,
    monkeypatch,
):
    fleet = fresh_container_fleet
    host, engine, target, before = _captured(fleet, monkeypatch, tmp_path)
    plan = _run(fleet, "kill", target, "--dry-run")
    assert f"{engine.kind} stop -t 20 {before['id'][:12]}" in plan.stdout, plan.stdout
    assert _containers(engine)["sglang-30000"]["running"]

    killed = _run(fleet, "kill", target, "--yes")
    assert killed.returncode == 0, killed.stdout + killed.stderr
    assert "port 30000 free" in killed.stdout and "released" in killed.stdout
    after = _containers(engine)
    assert "sglang-30000" not in after  # the name is free for a relaunch
    assert not after[f"sglang-30000-was-{before['id'][:12]}"]["running"]
    assert _run(fleet, "status", "--json").returncode == 1  # DOWN

    rolled = _run(fleet, "rollback", target, "--yes")
    assert rolled.returncode == 0, rolled.stdout + rolled.stderr
    back = _containers(engine)
    assert back["sglang-30000"]["id"] == before["id"] and back["sglang-30000"]["running"]


def test_preflight_refuses_a_missing_image_or_an_argv_the_images_sglang_refuses_first(
    fresh_container_fleet,  # noqa: F811 - the fixture imported above
    tmp_path,
    monkeypatch,
):
    fleet = fresh_container_fleet
    host, engine, target, before = _captured(fleet, monkeypatch, tmp_path)
    text = fleet.config_path.read_text()
    gone = "sha256:" + "0" * 64
    fleet.config_path.write_text(text.replace(before["image"], gone))
    refused = _run(fleet, "restore", target, "--yes")
    assert refused.returncode == 1, refused.stdout + refused.stderr
    assert f"{engine.kind} has no image {gone}" in refused.stdout
    assert "nothing was touched" in refused.stdout
    assert _containers(engine)["sglang-30000"] == before  # still the same container, running

    data = yaml.safe_load(text)
    data["profiles"]["boxed"]["args"] += ["--speculative-num-stepz", "3"]
    fleet.config_path.write_text(yaml.safe_dump(data, sort_keys=False))
    refused = _run(fleet, "restore", target, "--yes")
    assert refused.returncode == 1, refused.stdout + refused.stderr
    assert "unrecognized arguments: --speculative-num-stepz" in refused.stdout
    assert _containers(engine)["sglang-30000"] == before


def test_a_server_run_the_guides_way_is_killed_as_its_container(
    fresh_container_fleet,  # noqa: F811 - the fixture imported above
    tmp_path,
    monkeypatch,
):
    """Its profile is a plain one (hosts.yaml as the fleet wrote it), but its process names its
    container: the kill stops the container, whose restart policy would start a signalled
    process again, and keeps it for rollback."""
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    fleet = fresh_container_fleet
    (host,) = fleet.hosts
    engine = fleet.engine(host, fleet.hosts[host].spec.engines[0])
    before = _containers(engine)["sglang-30000"]
    status = json.loads(_run(fleet, "status", "--json").stdout)
    (server,) = status["hosts"][host]["servers"]
    assert server["status"] == "UP", server  # its profile is silent on containers: not drift
    killed = _run(fleet, "kill", f"{host}:30000", "--yes")
    assert killed.returncode == 0, killed.stdout + killed.stderr
    assert f"{engine.kind} stop -t 20 {before['id'][:12]}" in killed.stdout
    time.sleep(3)  # unless-stopped: a container whose process died would be running again
    after = _containers(engine)
    assert not after[f"sglang-30000-was-{before['id'][:12]}"]["running"]
    status = json.loads(_run(fleet, "status", "--json").stdout)
    (server,) = status["hosts"][host]["servers"]
    assert server["status"] == "DOWN", server


def test_an_upgrade_of_a_container_profile_is_refused_with_what_to_do_instead(
    fresh_container_fleet,  # noqa: F811 - the fixture imported above
    tmp_path,
    monkeypatch,
):
    fleet = fresh_container_fleet
    host, engine, target, before = _captured(fleet, monkeypatch, tmp_path)
    refused = _run(fleet, "upgrade", target, "--to", "0.5.17", "--dry-run")
    assert refused.returncode != 0, refused.stdout + refused.stderr
    assert "another SGLang is another image" in refused.stdout + refused.stderr
    assert _containers(engine)["sglang-30000"] == before  # nothing touched
