"""A host's container engine (Docker or Podman), asked now through its own CLI: which container
serves a port, what one container is, whether an image is present.

Read-only: what changes a host (stop, rename, start, rm, run) is the actions' (actions.container),
each an argv list. Actions ask here right before they act, by container id, never by name.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass

from sglconsole.core.containers import ContainerInfo, image_index, is_sglang, parse_inspect
from sglconsole.core.processes import ServerProcess
from sglconsole.remote.ssh.connection import SshHost

ENGINES = ("docker", "podman")


@dataclass(frozen=True, kw_only=True)
class Found:
    """What the engines on a host said of a port: the container serving it, if any, and why not
    where none could be read (an engine absent is said, never an error)."""

    container: ContainerInfo | None
    problems: tuple[str, ...] = ()


async def inspect_raw(ssh: SshHost, engine: str, ids: list[str]) -> list[dict]:
    """The engine's own inspect objects of these containers ([] where it answers none)."""
    if not ids:
        return []
    result = await ssh.run([engine, "inspect", "--type", "container", *ids], timeout=30)
    try:
        items = json.loads(result.stdout or "[]")
    except ValueError:
        return []
    return [item for item in items if isinstance(item, dict)] if isinstance(items, list) else []


async def inspect(ssh: SshHost, engine: str, ids: list[str]) -> tuple[ContainerInfo, ...]:
    """These containers as their engine describes them now, their images' digests included."""
    items = await inspect_raw(ssh, engine, ids)
    if not items:
        return ()
    image_ids = sorted({str(item.get("Image")) for item in items})
    images = await image_inspect(ssh, engine, image_ids)
    return parse_inspect(items, engine, images)


async def image_inspect(ssh: SshHost, engine: str, refs: list[str]) -> dict[str, dict]:
    """Image id -> the image's inspect object, for every ref that names an image here."""
    if not refs:
        return {}
    result = await ssh.run([engine, "image", "inspect", *refs], timeout=30)
    return image_index(result.stdout or "[]")


async def image_id_of(ssh: SshHost, engine: str, ref: str) -> str | None:
    """The id (sha256:...) of the image REF names on this host now; None: not present."""
    images = await image_inspect(ssh, engine, [ref])
    return next(iter(images), None)


async def serving(
    ssh: SshHost, port: int, engines: tuple[str, ...] = ENGINES, *, running: bool = True
) -> Found:
    """The SGLang container that answers on PORT (a running one; with running=False also a
    stopped one that would), asking each engine the host has."""
    problems = []
    for engine in engines:
        listed = await ssh.run(
            [engine, "ps", "-q", "--no-trunc", *(() if running else ("-a",))], timeout=30
        )
        if listed.exit_status == 127 or "not found" in listed.stderr:
            continue  # no such engine here: nothing to say
        if not listed.ok:
            problems.append(f"{engine} ps: {listed.stderr.strip()[-200:] or 'failed'}")
            continue
        ids = listed.stdout.split()
        for info in await inspect(ssh, engine, ids):
            if is_sglang(info) and info.port == port and (info.running or not running):
                return Found(container=info, problems=tuple(problems))
    return Found(container=None, problems=tuple(problems))


async def by_id(ssh: SshHost, engine: str, container_id: str) -> ContainerInfo | None:
    """One container by its id, as it is now (None: gone)."""
    found = await inspect(ssh, engine, [container_id])
    return found[0] if found else None


_CGROUP = re.compile(r"(docker|libpod)[-/]([0-9a-f]{64})")


async def container_of_pid(ssh: SshHost, pid: int) -> tuple[str, str] | None:
    """(engine, container id) of the container process PID runs in, from its cgroup (docker/ID,
    docker-ID.scope, libpod-ID...): the process names its container, not a guess by port."""
    result = await ssh.run(["cat", f"/proc/{pid}/cgroup"], timeout=15)
    found = _CGROUP.findall(result.stdout) if result.ok else []
    if not found:
        return None
    kind, container_id = found[-1]  # the innermost, where engines nest (a host that is one)
    return ("docker" if kind == "docker" else "podman"), container_id


async def container_serving(
    ssh: SshHost, port: int, process: ServerProcess | None, engine: str | None = None
) -> ContainerInfo | None:
    """The running container of the server on PORT: the one its process's cgroup names (any
    engine: a server captured from `docker run` is one too), else, where the login sees no such
    process, the one ENGINE (the profile's) says serves the port."""
    if process is not None:
        found = await container_of_pid(ssh, process.main.pid)
        if found is not None:
            info = await by_id(ssh, *found)
            return info if info is not None and info.running else None
    if engine is None:
        return None
    return (await serving(ssh, port, (engine,))).container
