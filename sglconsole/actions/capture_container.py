"""Capture of a containerised server: the profile's `container:` block from its engine's inspect —
the image by tag and by id (the proven one), and the `run` options that change behaviour.

The GPUs belong to the server entry (as CUDA_VISIBLE_DEVICES does for a process), the name to
the launch (sglang-PORT), the image's own environment to the image: none is written.
"""

from __future__ import annotations

from sglconsole.core.containers import ContainerInfo, parse_inspect
from sglconsole.core.drift_container import DEFAULT_SHM_BYTES, PRIVATE_IPC, shm_text
from sglconsole.remote.container_engine import container_of_pid, image_inspect, inspect_raw
from sglconsole.remote.ssh.connection import SshHost

IMAGE_ENV = {"PATH", "HOSTNAME", "HOME", "TERM", "container"}
"""Set by the image or the engine in every container: not the operator's."""
GPU_ENV = {"NVIDIA_VISIBLE_DEVICES"}
"""The GPU option says this one (a CUDA_VISIBLE_DEVICES given with -e is the operator's)."""


async def container_of(ssh: SshHost, pid: int) -> tuple[ContainerInfo, dict] | None:
    """The container process PID runs in (its record and the engine's own inspect object)."""
    found = await container_of_pid(ssh, pid)
    if found is None:
        return None
    engine, container_id = found
    raw = await inspect_raw(ssh, engine, [container_id])
    if not raw:
        return None
    images = await image_inspect(ssh, engine, [str(raw[0].get("Image"))])
    parsed = parse_inspect(raw, engine, images)
    return (parsed[0], raw[0]) if parsed else None


def container_block(info: ContainerInfo, raw: dict) -> dict:
    """The `container:` block of the captured profile (what a launch needs to start it again)."""
    options = info.options
    host = raw.get("HostConfig") if isinstance(raw.get("HostConfig"), dict) else {}
    written: dict = {}
    env_gpus = "NVIDIA_VISIBLE_DEVICES" in options.env and not host.get("DeviceRequests")
    if options.gpus and env_gpus:
        written["gpus_as"] = "env"
    if options.shm_size is not None and options.shm_size != DEFAULT_SHM_BYTES:
        written["shm-size"] = shm_text(options.shm_size)
    if options.ipc and options.ipc not in PRIVATE_IPC:
        written["ipc"] = options.ipc
    if host.get("PidMode"):
        written["pid"] = host["PidMode"]
    if options.network and options.network != "host":
        written["network"] = "bridge" if options.network == "default" else options.network
    if options.volumes:
        written["volumes"] = list(options.volumes)
    if info.restart_policy and info.restart_policy != "no":
        written["restart"] = info.restart_policy
    block = {"engine": info.engine, "image": info.image, "image_id": info.image_id}
    return {**block, **({"options": written} if written else {})}


def container_env(env: dict[str, str]) -> dict[str, str]:
    """The process's environment less what the image, the engine and the GPUs set."""
    return {name: value for name, value in env.items() if name not in IMAGE_ENV | GPU_ENV}
