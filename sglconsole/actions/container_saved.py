"""What the rollback store keeps of a replaced container, and the name it is kept under (pure)."""

from __future__ import annotations

from sglconsole.core.containers import ContainerInfo


def kept_name(info: ContainerInfo) -> str:
    """The name a replaced container is kept under for rollback: its own, and its id's start."""
    return f"{info.name}-was-{info.id[:12]}"


def saved_container(info: ContainerInfo) -> dict:
    """What the rollback store keeps of a container (rollback renames and starts it again)."""
    return {
        "engine": info.engine,
        "id": info.id,
        "name": info.name,
        "kept_as": kept_name(info),
        "image": info.image,
        "image_id": info.image_id,
        "pid": info.pid,
    }
