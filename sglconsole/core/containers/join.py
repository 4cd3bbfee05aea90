"""Which container a server process runs in, and what that changes about it (pure).

A container's processes are the host's processes: the watcher finds the server by its argv in
/proc like any other; the engine says which container it is. The container's main PID is the
server itself, or (`--init`, a shell entrypoint) its parent. Its host port is the engine's
(a published `-p 8080:30000` serves on 8080, not the 30000 of the argv), and where nvidia-smi
has not yet attributed memory its GPUs are the ones the engine gave it.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import replace

from sglconsole.core.containers.inspect import is_sglang
from sglconsole.core.containers.log_lines import parse_stamp, stamp_seconds
from sglconsole.core.containers.record import ContainerInfo
from sglconsole.core.processes import ServerProcess

ENGINE_PARENTS = ("containerd-shim", "conmon", "docker-init", "catatonit", "tini", "dumb-init")
"""What a container's main process runs under, by name (comm, cut to 15 characters): Docker's
containerd-shim-runc-v2 and Podman's conmon, or the init each adds with `--init`. A server's
parent or grandparent (a shell entrypoint between) named so may be in a container."""


def may_run_in_container(process: ServerProcess) -> bool:
    """Whether only its engine can say if this server runs in a container: nothing else needs
    to wait for the engines' word."""
    return any(name.startswith(ENGINE_PARENTS) for name in process.main.ancestors)


def container_of(
    process: ServerProcess, containers: Iterable[ContainerInfo]
) -> ContainerInfo | None:
    """The running SGLang container whose main PID is this server's, or its parent."""
    main = process.main
    for info in containers:
        if info.pid is not None and info.pid in (main.pid, main.ppid) and is_sglang(info):
            return info
    return None


STAMP_SLACK_S = 0.5
"""An engine's line stamps, its record's start and a process's start (boot time + ticks) are all
the host's clock, to within this."""


def log_writer(
    info: ContainerInfo, process: ServerProcess | None, stamp: tuple[int, int] | None
) -> int | None:
    """Who wrote a line of the container's log, stamped STAMP by its engine (split_stamp): the
    server's process when the container's record names it (its pid or its parent). After a
    restart the watcher can see the new process before the engine's event renews the record: a
    process that started after the record's start wrote the lines stamped after its own start.
    Else the pid the record names (its main pid, until the watcher has seen this start's
    process)."""
    if process is None:
        return info.pid
    main = process.main
    if info.pid in (main.pid, main.ppid):
        return main.pid
    recorded = parse_stamp(info.started_at) if info.started_at else None
    stale = recorded is not None and main.start > stamp_seconds(recorded) + STAMP_SLACK_S
    if stale and stamp is not None and stamp_seconds(stamp) >= main.start - STAMP_SLACK_S:
        return main.pid
    return info.pid


def in_container(process: ServerProcess, info: ContainerInfo) -> ServerProcess:
    """The server process as the host sees it: on the container's host port, on its GPUs."""
    gpus = process.gpus
    engine_gpus = info.options.gpus or ()
    if not gpus and engine_gpus and all(gpu.isdigit() for gpu in engine_gpus):
        gpus = tuple(int(gpu) for gpu in engine_gpus)
    port = info.port if info.port is not None else process.port
    return replace(process, port=port, gpus=gpus)


def lifetime(info: ContainerInfo) -> tuple[str, str | None]:
    """One start of one container: a restart is another lifetime (its numbers start empty)."""
    return info.id, info.started_at


def describe(info: ContainerInfo, version: str | None) -> str:
    """The one line every view shows of a server's container."""
    image = info.image or "?"
    if info.image_id:
        image += f" ({info.image_id.removeprefix('sha256:')[:12]})"
    parts = [f"{info.engine} container {info.name}", f"image {image}"]
    parts.append(f"SGLang {version} inside" if version else "SGLang inside: not known yet")
    if info.restart_policy:
        parts.append(f"restart {info.restart_policy}")
    if info.options.gpus:
        parts.append(f"GPUs {','.join(info.options.gpus)}")
    return " · ".join(parts)


def engine_problem(engine: str, state: str, detail: str | None) -> str | None:
    """What a view says of a host's engine (None: nothing to say: ok, or not installed)."""
    if state in ("ok", "absent"):
        return None
    what = {"down": "its daemon does not answer", "denied": "this login may not use it"}
    return f"{engine}: {what.get(state, state)}" + (f" ({detail})" if detail else "")
