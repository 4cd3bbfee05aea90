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
from sglconsole.core.containers.join import (
    container_of,
    describe,
    engine_problem,
    in_container,
    lifetime,
    log_writer,
    may_run_in_container,
)
from sglconsole.core.containers.log_lines import (
    format_stamp,
    parse_stamp,
    split_stamp,
    stamp_seconds,
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
    "container_of",
    "describe",
    "engine_problem",
    "format_stamp",
    "in_container",
    "lifetime",
    "log_writer",
    "may_run_in_container",
    "guess_engine",
    "image_index",
    "is_sglang",
    "parse_inspect",
    "parse_stamp",
    "sglang_port",
    "split_stamp",
    "stamp_seconds",
]
