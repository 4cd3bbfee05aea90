"""`docker inspect` / `podman inspect` JSON -> ContainerInfo records (pure; never raises).

Read from real captures of both engines (tests/data/containers/). Where the two differ:
docker names a container "/name" and its image id "sha256:..."; podman says "name" and the
bare hex. Podman 4.3 keeps neither a CDI device (`--device nvidia.com/gpu=all`) nor
`--ipc=host` in HostConfig (it reports "shareable"), so for those its CreateCommand, the
argv the user gave, is read too.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from sglconsole.core.containers.record import DOCKER, PODMAN, ContainerInfo, RunOptions
from sglconsole.core.launch_form import split_launch
from sglconsole.core.secrets import mask_argv, mask_env

SGLANG_DEFAULT_PORT = 30000  # SGLang's --port default (server_args.py)
_NEVER = "0001-01-01T00:00:00Z"  # Go's zero time: the engine's "not yet"
_VERSION_LABEL = "org.opencontainers.image.version"
_GPU_CDI_PREFIX = "nvidia.com/gpu="


def parse_inspect(
    text: str | list, engine: str | None = None, images: Mapping[str, Any] | None = None
) -> tuple[ContainerInfo, ...]:
    """Every container in an inspect answer (a JSON list, as text or loaded). `images` maps an
    image id (sha256:...) to that image's inspect object, for its registry digests."""
    try:
        items = json.loads(text) if isinstance(text, str) else text
    except ValueError:
        return ()
    if not isinstance(items, list):
        return ()
    out = []
    for item in items:
        info = container_info(item, engine, images)
        if info is not None:
            out.append(info)
    return tuple(out)


def container_info(
    item: Any, engine: str | None = None, images: Mapping[str, Any] | None = None
) -> ContainerInfo | None:
    """One container's inspect object as a record (None: not a container's inspect)."""
    if not isinstance(item, dict) or not isinstance(item.get("Id"), str):
        return None
    engine = engine or guess_engine(item)
    config = _dict(item.get("Config"))
    host = _dict(item.get("HostConfig"))
    state = _dict(item.get("State"))
    created_by = _strings(config.get("CreateCommand")) or ()
    raw_argv = (*(_strings([item.get("Path")]) or ()), *(_strings(item.get("Args")) or ()))
    env = _env(config.get("Env"))
    image_id = _image_id(item.get("Image"))
    image = item.get("ImageName") if engine == PODMAN else config.get("Image")
    running = state.get("Running") if isinstance(state.get("Running"), bool) else None
    pid = state.get("Pid")
    return ContainerInfo(
        engine=engine,
        id=item["Id"],
        name=str(item.get("Name") or "").lstrip("/") or item["Id"][:12],
        image=image if isinstance(image, str) and image else None,
        image_id=image_id,
        repo_digests=_repo_digests(images, image_id),
        image_version=_str(_dict(config.get("Labels")).get(_VERSION_LABEL)),
        created=_time(item.get("Created")),
        started_at=_time(state.get("StartedAt")),
        state=_str(state.get("Status")),
        running=running,
        pid=pid if isinstance(pid, int) and pid > 0 and running else None,
        restart_policy=_restart_policy(host),
        restart_count=_int(item.get("RestartCount")),
        port=_host_port(raw_argv, host, _dict(item.get("NetworkSettings"))),
        argv=tuple(mask_argv(list(raw_argv))),
        options=RunOptions(
            gpus=_gpus(host, created_by, env),
            shm_size=_int(host.get("ShmSize")) or None,
            ipc=_flag_value(created_by, "--ipc") or _str(host.get("IpcMode")),
            network=_str(host.get("NetworkMode")),
            volumes=_volumes(item.get("Mounts")),
            env=mask_env(env),
            ulimits=_ulimits(host.get("Ulimits")),
        ),
    )


def image_index(text: str | list) -> dict[str, dict]:
    """An `image inspect` answer as {image id (sha256:...): its inspect object}: what
    parse_inspect's `images` wants (podman gives the id without its "sha256:")."""
    try:
        items = json.loads(text) if isinstance(text, str) else text
    except ValueError:
        return {}
    index = {}
    for item in items if isinstance(items, list) else ():
        image_id = _image_id(_dict(item).get("Id"))
        if image_id is not None:
            index[image_id] = item
    return index


def is_sglang(info: ContainerInfo) -> bool:
    """Whether the container's command runs an SGLang server (by argv, never by image name)."""
    return split_launch(info.argv)[0] is not None


def guess_engine(item: Mapping[str, Any]) -> str:
    annotations = _dict(_dict(item.get("Config")).get("Annotations"))
    libpod = annotations.get("io.container.manager") == "libpod"
    return PODMAN if libpod or "ImageName" in item else DOCKER


def sglang_port(argv: tuple[str, ...]) -> int | None:
    """The --port of an SGLang argv (SGLang's default where it has none; None: no SGLang)."""
    entry, args = split_launch(argv)
    if entry is None:
        return None
    value = _flag_value(args, "--port")
    if value is None:
        return SGLANG_DEFAULT_PORT
    return int(value) if value.isdigit() else None


def _host_port(argv: tuple[str, ...], host: dict, network: dict) -> int | None:
    inside = sglang_port(argv)
    if inside is None:
        return None
    if host.get("NetworkMode") == "host":
        return inside
    for source in (_dict(host.get("PortBindings")), _dict(network.get("Ports"))):
        for binding in source.get(f"{inside}/tcp") or ():
            port = _dict(binding).get("HostPort")
            if isinstance(port, str) and port.isdigit():
                return int(port)
    return None  # not published: unreachable from the host


def _gpus(host: dict, created_by: tuple[str, ...], env: dict[str, str]) -> tuple[str, ...] | None:
    for request in host.get("DeviceRequests") or ():
        request = _dict(request)
        capabilities = [cap for group in request.get("Capabilities") or () for cap in group or ()]
        ids = _strings(request.get("DeviceIDs"))
        if request.get("Driver") == "cdi" and ids:
            return _cdi_gpus(ids)
        if "gpu" in capabilities or request.get("Driver") == "nvidia":
            if ids:
                return ids
            return ("all",) if request.get("Count") == -1 else None
    devices = [str(_dict(dev).get("PathOnHost") or "") for dev in host.get("Devices") or ()]
    devices += _flag_values(created_by, "--device")
    cdi = _cdi_gpus(tuple(devices))
    if cdi:
        return cdi
    visible = env.get("NVIDIA_VISIBLE_DEVICES")
    if visible and visible not in ("void", "none"):
        return tuple(part.strip() for part in visible.split(",") if part.strip())
    return None


def _cdi_gpus(devices: tuple[str, ...]) -> tuple[str, ...] | None:
    found = tuple(dev[len(_GPU_CDI_PREFIX) :] for dev in devices if dev.startswith(_GPU_CDI_PREFIX))
    return found or None


def _flag_values(argv: tuple[str, ...], flag: str) -> list[str]:
    """Every value of `flag` in an argv (`--flag V` and `--flag=V`)."""
    values = []
    for index, arg in enumerate(argv):
        if arg == flag and index + 1 < len(argv):
            values.append(argv[index + 1])
        elif arg.startswith(flag + "="):
            values.append(arg.split("=", 1)[1])
    return values


def _flag_value(argv: tuple[str, ...], flag: str) -> str | None:
    values = _flag_values(argv, flag)
    return values[-1] if values else None  # argparse and the engines' CLIs: the last one wins


def _volumes(mounts: Any) -> tuple[str, ...]:
    out = []
    for mount in mounts or ():
        mount = _dict(mount)
        source = mount.get("Name") if mount.get("Type") == "volume" else mount.get("Source")
        text = f"{source}:{mount.get('Destination')}"
        out.append(text if mount.get("RW", True) else text + ":ro")
    return tuple(out)


def _ulimits(items: Any) -> tuple[str, ...] | None:
    out = []
    for item in items or ():
        item = _dict(item)
        name = str(item.get("Name") or "").lower().removeprefix("rlimit_")
        out.append(f"{name}={item.get('Soft')}:{item.get('Hard')}")
    return tuple(out) or None


def _restart_policy(host: dict) -> str | None:
    policy = host.get("RestartPolicy")
    if not isinstance(policy, dict):
        return None
    name = policy.get("Name")
    return (name or "no") if isinstance(name, str) else None  # "": no policy was given


def _repo_digests(images: Mapping[str, Any] | None, image_id: str | None) -> tuple[str, ...] | None:
    if images is None or image_id is None or image_id not in images:
        return None
    return _strings(_dict(images[image_id]).get("RepoDigests")) or ()


def _image_id(value: Any) -> str | None:
    if not isinstance(value, str) or not value:
        return None
    return value if value.startswith("sha256:") else "sha256:" + value


def _env(items: Any) -> dict[str, str]:
    env = {}
    for item in _strings(items) or ():
        name, _, value = item.partition("=")
        env[name] = value
    return env


def _time(value: Any) -> str | None:
    return value if isinstance(value, str) and value and value != _NEVER else None


def _str(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


def _int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _dict(value: Any) -> dict:
    return value if isinstance(value, dict) else {}


def _strings(value: Any) -> tuple[str, ...] | None:
    if not isinstance(value, list):
        return None
    return tuple(item for item in value if isinstance(item, str))
