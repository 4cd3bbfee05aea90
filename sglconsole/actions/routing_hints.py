"""What the operator is told when a worker stays out of its router: the exact request that puts it
back, with the gateway's admin token by its name (`${VAR}`), never its value."""

from __future__ import annotations

import json
import shlex

from sglconsole.actions.base import ActionContext
from sglconsole.config.routers import Route


def add_back_hint(ctx: ActionContext, route: Route) -> str:
    body = json.dumps({"url": route.worker_url, "worker_type": "regular"})
    headers = ["-H", "Content-Type: application/json"]  # and the gateway's token, by its name:
    if route.spec.admin_token:  # the operator fills it in; the secret is never printed
        headers += ["-H", f"Authorization: Bearer {route.spec.admin_token}"]
    url = f"{route.where()}/workers"
    command = shlex.join(["curl", "-X", "POST", url, *headers, "-d", body])
    if route.spec.host:
        return f"ssh {route.spec.host} {shlex.quote(command)}"
    return command


def stays_out(ctx: ActionContext, target: str, route: Route) -> str:
    hint = add_back_hint(ctx, route)
    return f"{target} stays out of router {route.router}: add it back with {hint}"
