"""A profile's `container:` block: the engine, the image and the `run` options a server starts with.

The models validate what hosts.yaml says (extra keys are errors, as everywhere); how the block
becomes a `docker run` / `podman run` argv is config.container_run's job.
"""

from __future__ import annotations

import re
from typing import Annotated, Any, Literal

from pydantic import BeforeValidator, ConfigDict, Field

from sglconsole.config.schema_types import Argv, EnvValue, Model

ENGINES = ("docker", "podman")
_SIZE = re.compile(r"^[0-9]+(?:\.[0-9]+)?[bkmgBKMG]?$")
_RESTART = re.compile(r"^(?:no|always|unless-stopped|on-failure(?::[0-9]+)?)$")
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]*$")


def _size(value: Any) -> str:
    text = str(value) if isinstance(value, (int, str)) and not isinstance(value, bool) else None
    if text is None or not _SIZE.match(text):
        raise ValueError(f"expected a size such as 32g, 512m or 1073741824, got {value!r}")
    return text


def _restart(value: Any) -> str:
    if isinstance(value, str) and _RESTART.match(value):
        return value
    raise ValueError(
        f"expected no, always, unless-stopped or on-failure[:N], got {value!r}"
        + (' (quote it: YAML reads a bare no as false, write "no")' if value is False else "")
    )


def _name(value: Any) -> str:
    if isinstance(value, str) and _NAME.match(value.replace("{port}", "0")):
        return value
    raise ValueError(
        "expected a container name (letters, digits, '_', '.', '-'; {port} is the server's port),"
        f" got {value!r}"
    )


def _gpus(value: Any) -> str | list[int]:
    if value == "all":
        return value
    if isinstance(value, list) and all(
        isinstance(item, int) and not isinstance(item, bool) and item >= 0 for item in value
    ):
        return value
    raise ValueError(f"expected 'all' or a list of GPU indices such as [0, 1], got {value!r}")


_VOLUME = re.compile(r"^(?:/[^:\s]*|[A-Za-z0-9][\w.-]*):/[^:\s]*(?::[A-Za-z,]+)?$")


def _volume(value: Any) -> str:
    # no shell runs the command, so nothing would expand ~ or $HOME: the source is absolute or a
    # named volume, the target absolute (a bare target would be an anonymous volume)
    if isinstance(value, str) and _VOLUME.match(value):
        return value
    raise ValueError(
        "expected /SOURCE:/TARGET[:ro] or VOLUME:/TARGET, e.g."
        " /root/.cache/huggingface:/root/.cache/huggingface (no shell runs it: write ~ out),"
        f" got {value!r}"
    )


def _network(value: Any) -> str:
    if isinstance(value, str) and value and value != "none":
        return value
    raise ValueError(
        "expected host (the default) or a network the console reaches the port through,"
        f" got {value!r}"
    )


Size = Annotated[
    str,
    BeforeValidator(
        _size,
        json_schema_input_type=Annotated[str, Field(pattern=_SIZE.pattern)]
        | Annotated[int, Field(ge=0)],
    ),
]
Restart = Annotated[
    str,
    BeforeValidator(
        _restart, json_schema_input_type=Annotated[str, Field(pattern=_RESTART.pattern)]
    ),
]
ContainerName = Annotated[str, BeforeValidator(_name, json_schema_input_type=str)]
Gpus = Annotated[
    str | list[int],
    BeforeValidator(
        _gpus, json_schema_input_type=Literal["all"] | list[Annotated[int, Field(ge=0)]]
    ),
]
Volume = Annotated[
    str,
    BeforeValidator(_volume, json_schema_input_type=Annotated[str, Field(pattern=_VOLUME.pattern)]),
]
Network = Annotated[str, BeforeValidator(_network, json_schema_input_type=str)]


class ContainerOptions(Model):
    """The `run` options that change how the server behaves, each compared by drift."""

    model_config = ConfigDict(populate_by_name=True)

    gpus: Gpus | None = None
    """'all' or host GPU indices; unset: the server entry's `gpus` (none: no GPU option)."""
    gpus_as: Literal["flag", "env"] = "flag"
    """How the GPUs are given: flag (Docker's --gpus, Podman's CDI --device), or env
    (NVIDIA_VISIBLE_DEVICES, for hosts whose default runtime is NVIDIA's)."""
    shm_size: Size | None = Field(default=None, alias="shm-size")
    """`--shm-size` (SGLang's guide: 32g); unset: the engine's default (64m)."""
    ipc: str | None = None
    """`--ipc` (host, private, shareable, container:NAME)."""
    pid: str | None = None
    """`--pid` (host: the container's processes keep their host PIDs inside, so what they
    report of themselves matches nvidia-smi's)."""
    network: Network = "host"
    """`--network`: host (the default: the server listens on the host's port); any other
    publishes the server's port with `-p PORT:PORT`."""
    volumes: list[Volume] = []
    """`-v SOURCE:TARGET[:ro]`, e.g. ~/.cache/huggingface:/root/.cache/huggingface."""
    env: dict[str, EnvValue] = {}
    """`-e NAME=VALUE` for the container (the profile's `env:` goes in too); ${VAR} resolves
    from the operator's environment at launch and is shown masked."""
    name: ContainerName | None = None
    """The container's name ({port}: the server's port); unset: sglang-PORT."""
    restart: Restart | None = None
    """`--restart` policy; unset: the engine's default (no)."""
    extra: Argv = []
    """More `run` options, passed as written before the image (e.g. [--ulimit, memlock=-1])."""


class Container(Model):
    """The server runs in a container: `ENGINE run -d ... IMAGE PYTHON -m sglang.launch_server
    ARGS` (the profile's `python` is the interpreter inside the image)."""

    engine: Literal["docker", "podman"]
    """Which engine's CLI on the host runs it."""
    image: str = Field(min_length=1)
    """The image as named, e.g. lmsysorg/sglang:v0.5.23 (a tag may be re-pulled)."""
    image_id: str | None = Field(default=None, pattern=r"^(?:[^@\s]+@)?sha256:[0-9a-f]{12,64}$")
    """The proven image itself (sha256:ID, or REPO@sha256:DIGEST; capture writes it): a launch
    runs this one, and drift says when the tag now names another."""
    options: ContainerOptions = ContainerOptions()


def check_containers(model, add) -> None:
    """What one field cannot say alone: a containerised server is started by its engine, never by a
    systemd unit or systemd-run, and its GPUs are given once (the server's `gpus` or the
    profile's `options.gpus`, not two different answers)."""
    for host_name, host in model.hosts.items():
        for index, server in enumerate(host.servers):
            profile = model.profiles.get(server.profile)
            container = profile.container if profile is not None else None
            if container is None:
                continue
            loc = ("hosts", host_name, "servers", index)
            if server.launcher != "nohup":
                add(
                    loc + ("launcher",),
                    f"profile {server.profile!r} runs in a {container.engine} container, which its"
                    f" engine starts: launcher {server.launcher!r} cannot apply",
                )
            gpus = container.options.gpus
            if server.gpus and gpus is not None and gpus != list(server.gpus):
                add(
                    loc + ("gpus",),
                    f"profile {server.profile!r} gives its container gpus {gpus!r}, which"
                    f" disagrees with this server's gpus {list(server.gpus)}",
                )
