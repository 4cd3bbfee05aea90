"""The container engines' `inspect` answers, read from real captures (tests/data/containers/:
docker.io 20.10 and podman 4.3 on Debian 12, containers run the way SGLang's guide runs one and
with host networking, each with an HF_TOKEN that must never show)."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from sglconsole.core.containers import (
    ContainerInfo,
    container_of,
    describe,
    engine_problem,
    format_stamp,
    image_index,
    in_container,
    is_sglang,
    log_writer,
    parse_inspect,
    parse_stamp,
    split_stamp,
    stamp_seconds,
)
from sglconsole.core.processes import ProcInfo, ServerProcess, launch_args, port_of

DATA = Path(__file__).resolve().parents[1] / "data" / "containers"


def _one(name: str, images: str | None = None) -> ContainerInfo:
    index = image_index((DATA / images).read_text()) if images else None
    (info,) = parse_inspect((DATA / name).read_text(), images=index)
    return info


def test_docker_host_network_server():
    info = _one("docker-host-network.json", "docker-image.json")
    assert info.engine == "docker" and info.name == "sglang-qwen8b"
    assert info.id.startswith("67092bf9edcd") and len(info.id) == 64
    assert info.image == "simsglang:latest"
    assert (
        info.image_id == "sha256:5feb265d18584ebda58ea93fc7c37312c2a1b6106e2d716213815cdb55b896e4"
    )
    assert info.repo_digests == ()  # an imported image has none: its id is the digest
    assert info.image_version == "0.5.23"
    assert info.running is True and info.state == "running" and info.pid == 12221
    assert info.started_at == "2026-12-06T02:06:07.223873098Z"
    assert info.restart_policy == "unless-stopped" and info.restart_count == 0
    assert info.port == 30123  # host network: SGLang's own --port
    assert info.argv[1:3] == ("-m", "sglang.launch_server") and is_sglang(info)
    options = info.options
    assert options.gpus == ("0", "1")  # from NVIDIA_VISIBLE_DEVICES
    assert options.shm_size == 32 * 2**30 and options.ipc == "host" and options.network == "host"
    assert "/root/.pyenv:/root/.pyenv:ro" in options.volumes
    assert "/tmp/cw/h:/tmp/cw/h" in options.volumes
    assert options.env["HF_TOKEN"] == "****" and options.env["SGLANG_ENABLE_JIT_DEEPGEMM"] == "0"
    assert options.ulimits is None


def test_docker_guide_style_server_publishes_its_port_and_asks_for_all_gpus():
    info = _one("docker-guide.json")
    assert info.state == "created" and info.running is False
    assert info.pid is None and info.started_at is None  # never started: unknown, not 0
    assert info.repo_digests is None  # the image was not inspected
    assert info.port == 30000 and info.options.network == "default"
    assert info.options.gpus == ("all",)  # --gpus all: a device request with Count -1
    assert info.options.volumes == ("/tmp/cw/hf:/root/.cache/huggingface",)
    assert info.restart_policy == "no"


def test_docker_gpu_device_ids():
    info = _one("docker-gpus-devices.json")
    assert info.options.gpus == ("0", "1")  # --gpus '"device=0,1"'
    assert info.port == 30001


def test_podman_host_network_server():
    info = _one("podman-host-network.json", "podman-image.json")
    assert info.engine == "podman" and info.name == "sglang-qwen8b-pm"
    assert info.image == "localhost/simsglang:latest"
    assert (
        info.image_id == "sha256:205764a5069b25ae8356de09535f837ef5fdc3fe5b66c0cfe64480d7241a65f7"
    )
    assert info.repo_digests == (
        "localhost/simsglang@sha256:ec699cbbe100228f1c4c2467f7fde61e24f6a246c1740906da671f934f1d1900",
    )
    assert info.running and info.pid == 12953 and info.port == 30124
    assert info.restart_policy == "unless-stopped"
    assert info.options.gpus == ("0",) and info.options.network == "host"
    assert info.options.env["HF_TOKEN"] == "****"
    assert info.options.ulimits == ("nofile=1024:1024", "nproc=4096:4096")
    assert "hf_secretvalue123" not in repr(info)


def test_podman_guide_style_cdi_gpus_and_host_ipc_from_its_create_command():
    info = _one("podman-guide.json")
    assert info.options.gpus == ("all",)  # --device nvidia.com/gpu=all (CDI)
    assert info.options.ipc == "host"  # podman 4.3's HostConfig says "shareable"
    assert info.port == 30000 and info.options.network == "bridge"
    assert info.restart_policy == "no"


def test_secret_flags_in_the_command_are_masked():
    item = json.loads((DATA / "docker-host-network.json").read_text())
    item[0]["Args"] += ["--api-key", "sk-live-123"]
    (info,) = parse_inspect(item)
    assert info.argv[-2:] == ("--api-key", "****")


def test_a_container_that_runs_no_sglang():
    item = json.loads((DATA / "docker-host-network.json").read_text())
    item[0]["Path"], item[0]["Args"] = "nginx", ["-g", "daemon off;"]
    (info,) = parse_inspect(item)
    assert not is_sglang(info) and info.port is None


@given(st.recursive(st.none() | st.booleans() | st.integers() | st.text(max_size=8),
                    lambda inner: st.lists(inner, max_size=3)
                    | st.dictionaries(st.text(max_size=8), inner, max_size=3)))  # fmt: skip
def test_never_raises(value):
    parse_inspect(json.dumps([value, {"Id": "x", "State": value, "HostConfig": value}]))
    parse_inspect("not json")


def _process(pid: int, ppid: int, argv: tuple[str, ...], start: float = 0.0) -> ServerProcess:
    main = ProcInfo(pid, ppid, pid, pid, "S", "python3", argv, start, 0, main=True)
    return ServerProcess(main, port_of(launch_args(argv)), (), (), 0)


def test_a_published_port_is_where_the_host_reaches_the_server():
    item = json.loads((DATA / "docker-guide.json").read_text())
    item[0]["HostConfig"]["PortBindings"] = {"30000/tcp": [{"HostIp": "", "HostPort": "8080"}]}
    item[0]["State"].update(Running=True, Status="running", Pid=4242)
    (info,) = parse_inspect(item)
    assert info.port == 8080
    process = _process(4242, 4200, info.argv)  # the argv says 30000: the container's own port
    assert process.port == 30000 and container_of(process, [info]) is info
    placed = in_container(process, info)
    assert placed.port == 8080 and placed.gpus == ()  # --gpus all: no index to claim


def test_the_server_under_an_init_process_and_its_gpus():
    info = _one("docker-host-network.json")
    child = _process(12300, info.pid, info.argv)  # --init: tini is the container's main pid
    assert container_of(child, [info]) is info
    assert in_container(child, info).gpus == (0, 1)  # NVIDIA_VISIBLE_DEVICES, before nvidia-smi
    stranger = _process(999, 1, info.argv)
    assert container_of(stranger, [info]) is None


def test_one_line_says_where_it_runs():
    info = _one("podman-host-network.json")
    line = describe(info, "0.5.23")
    assert line.startswith("podman container sglang-qwen8b-pm · image localhost/simsglang:latest")
    assert "(205764a5069b)" in line and "SGLang 0.5.23 inside" in line and "GPUs 0" in line
    assert "not known yet" in describe(info, None)
    assert engine_problem("docker", "absent", None) is None
    assert engine_problem("docker", "denied", "permission denied").startswith("docker: this login")


def test_log_stamps_compare_as_times_not_text():
    docker = parse_stamp("2026-12-06T02:10:54.1Z")  # docker drops the trailing zeros
    podman = parse_stamp("2026-12-06T02:10:54.123456789+00:00")
    assert docker is not None and podman is not None and docker < podman
    assert "2026-12-06T02:10:54.1Z" > "2026-12-06T02:10:54.123456789Z"  # as text: the wrong way
    assert parse_stamp(format_stamp(podman)) == podman
    assert parse_stamp("2026-12-06T03:10:54+01:00") == parse_stamp("2026-12-06T02:10:54Z")
    stamp, line = split_stamp("2026-12-06T02:10:54.1Z [2026-12-06 02:10:54] Decode batch, x: 1")
    assert stamp == docker and line == "[2026-12-06 02:10:54] Decode batch, x: 1"
    assert split_stamp("no stamp here") == (None, "no stamp here")
    assert parse_stamp("2026-12-06T02:10:54") is None  # no zone: not a time we can place


def test_a_restart_seen_first_by_the_watcher_keeps_the_new_lines_the_new_process_s():
    """The watcher can see a restarted container's new process before the engine's event renews
    the container's record (a fresh clone's podman restart test once held samples of the old
    pid): the lines stamped after the new process started are still the new process's."""
    info = _one("docker-host-network.json")  # the record: its main pid, when it started
    (seconds, nanos) = parse_stamp(info.started_at)
    started = stamp_seconds((seconds, nanos))
    old = _process(info.pid, 1, info.argv, start=started)
    new = _process(info.pid + 500, 1, info.argv, start=started + 60)  # restarted a minute later
    assert log_writer(info, old, (seconds + 30, nanos)) == old.main.pid  # the record names it
    assert log_writer(info, None, (seconds + 30, nanos)) == info.pid  # no process seen yet
    # the record is of the start before the new process's: its lines after that are the new one's
    assert log_writer(info, new, (seconds + 61, nanos)) == new.main.pid
    assert log_writer(info, new, (seconds + 59, nanos)) == info.pid  # before the new start
    assert log_writer(info, new, None) == info.pid  # a line without a stamp: the record's
    # a record newer than the process the watcher knows (it has not seen the new one yet)
    renewed = replace(info, pid=info.pid + 700, started_at=format_stamp((seconds + 120, 0)))
    assert log_writer(renewed, new, (seconds + 121, 0)) == renewed.pid
