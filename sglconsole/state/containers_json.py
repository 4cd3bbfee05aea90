"""How `status --json` writes a server's container and a host's container engines (schema 1.6).

The version is the SGLang inside the container, by its own python (null: not known yet); the
server's `version` beside it stays /server_info's.
"""

from __future__ import annotations

from typing import Any

from sglconsole.state.model import HostState, ServerState


def container_json(server: ServerState) -> dict[str, Any] | None:
    info = server.container
    if info is None or server.process is None:
        return None
    return {
        "engine": info.engine,
        "name": info.name,
        "id": info.id,
        "image": info.image,
        "image_id": info.image_id,
        "repo_digests": None if info.repo_digests is None else list(info.repo_digests),
        "sglang_version": server.container_version,
        "started_at": info.started_at,
        "restart_policy": info.restart_policy,
        "restart_count": info.restart_count,
        "gpus": None if info.options.gpus is None else list(info.options.gpus),
        "network": info.options.network,
        "shm_size": info.options.shm_size,
        "ipc": info.options.ipc,
    }


def engines_json(host: HostState) -> dict[str, dict[str, Any]]:
    return {
        engine: {"state": state, "detail": detail}
        for engine, (state, detail) in sorted(host.engines.items())
    }
