"""Containers (Docker, Podman) that run SGLang servers: what their engine's `inspect` says, as
frozen records (pure: text in, records out)."""

from sglconsole.core.containers.inspect import (
    SGLANG_DEFAULT_PORT,
    container_info,
    guess_engine,
    image_index,
    is_sglang,
    parse_inspect,
    sglang_port,
)
from sglconsole.core.containers.record import (
    DOCKER,
    ENGINES,
    PODMAN,
    ContainerInfo,
    RunOptions,
)

__all__ = [
    "DOCKER",
    "ENGINES",
    "PODMAN",
    "SGLANG_DEFAULT_PORT",
    "ContainerInfo",
    "RunOptions",
    "container_info",
    "guess_engine",
    "image_index",
    "is_sglang",
    "parse_inspect",
    "sglang_port",
]
