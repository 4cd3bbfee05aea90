"""What a container engine says about one container, as the console keeps it (frozen records).

One rule: a field the engine did not answer is None, never 0 or "" (an unread port is not port 0).
"""

from __future__ import annotations

from dataclasses import dataclass

DOCKER = "docker"
PODMAN = "podman"
ENGINES = (DOCKER, PODMAN)


@dataclass(frozen=True, slots=True, kw_only=True)
class RunOptions:
    """The `docker run` options that change how SGLang behaves, apart from SGLang's own flags."""

    gpus: tuple[str, ...] | None
    """GPU indices/UUIDs, or ("all",): from device requests, CDI devices (nvidia.com/gpu=X)
    or NVIDIA_VISIBLE_DEVICES, in that order; None where the container names none."""
    shm_size: int | None
    """/dev/shm in bytes (None: the engine did not say; with --ipc=host the host's is used)."""
    ipc: str | None
    network: str | None
    volumes: tuple[str, ...]
    """SOURCE:DEST[:ro] of each bind mount or volume, as the engine lists them."""
    env: dict[str, str]
    """The container's environment, secrets masked."""
    ulimits: tuple[str, ...] | None
    """NAME=SOFT:HARD of each ulimit set on the container; None where none is."""


@dataclass(frozen=True, slots=True, kw_only=True)
class ContainerInfo:
    """One container, from `docker inspect` / `podman inspect` (and the image's inspect)."""

    engine: str
    id: str
    name: str
    image: str | None
    """The image as the container was given it (a tag such as lmsysorg/sglang:latest)."""
    image_id: str | None
    """sha256:... of the image that runs: the digest a re-pull changes."""
    repo_digests: tuple[str, ...] | None
    """The image's registry digests (repo@sha256:...); () for a locally built or imported
    image, None where the image was not inspected."""
    image_version: str | None
    """The image's org.opencontainers.image.version label (not proof of what runs inside)."""
    created: str | None
    started_at: str | None
    """When the container last started (ISO 8601): one lifetime per start."""
    state: str | None
    running: bool | None
    pid: int | None
    """The container's main process on the host (None while it does not run)."""
    restart_policy: str | None
    restart_count: int | None
    port: int | None
    """Where SGLang answers on the host: the published host port of its --port, or with host
    networking the --port itself (SGLang's default 30000 where the argv has none)."""
    argv: tuple[str, ...]
    """Entrypoint + command: the SGLang command inside, secrets masked."""
    options: RunOptions
