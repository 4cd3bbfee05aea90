"""hosts.yaml's `routers:`: which SGLang router fronts which server, and the checks that point
at the line (``hosts.yaml:31: routers.front.servers[2]: no server on h200x4:30009``)."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from sglconsole.config.schema import NAME_RE, Config, HostsFile, Router

TARGET_RE = re.compile(r"^([A-Za-z0-9][A-Za-z0-9_.-]*):(\d{1,5})$")
TOKEN_REF_RE = re.compile(r"^\$\{([A-Za-z_][A-Za-z0-9_]*)\}$")
"""`admin_token:` is `${VAR}`: a secret stays in the operator's environment, out of hosts.yaml."""


@dataclass(frozen=True)
class Route:
    """One server behind one router."""

    router: str
    spec: Router
    worker_url: str
    """The URL the router knows the server by."""

    def where(self) -> str:
        """How the operator reaches the router (for a command to paste)."""
        if self.spec.url:
            return self.spec.url.rstrip("/")
        return f"http://127.0.0.1:{self.spec.port}"


def split_target(text: str) -> tuple[str, int] | None:
    match = TARGET_RE.match(text.strip())
    return (match.group(1), int(match.group(2))) if match else None


def worker_url(model: HostsFile, name: str, router: Router, host: str, port: int) -> str:
    written = router.worker_urls.get(f"{host}:{port}")
    if written:
        return written.rstrip("/")
    server = next((server for server in model.hosts[host].servers if server.port == port), None)
    if router.host == host:
        return f"http://{server.http_address if server else '127.0.0.1'}:{port}"
    return f"http://{model.hosts[host].address}:{port}"


def routes_of(cfg: Config, host: str, port: int) -> list[Route]:
    """The routers that front HOST:PORT (none for most servers)."""
    return [
        Route(name, router, worker_url(cfg.model, name, router, host, port))
        for name, router in cfg.routers.items()
        if f"{host}:{port}" in (listed.strip() for listed in router.servers)
    ]


def check_routers(model: HostsFile, add: Callable[[tuple, str], None]) -> None:
    """Cross-checks of `routers:` pydantic cannot do alone; each problem goes to `add`."""
    for name, router in model.routers.items():
        loc = ("routers", name)
        if not NAME_RE.match(name):
            add(loc, "router names may use letters, digits, '.', '_' and '-' only")
        if (router.host is None) == (router.url is None):
            add(loc, "give either host: (an SSH host) and port:, or url:, not both or neither")
        if router.host is not None:
            if router.host not in model.hosts:
                known = ", ".join(model.hosts) or "none"
                add(loc + ("host",), f"unknown host {router.host!r} (hosts: {known})")
            if router.port is None:
                add(loc, "port: is required with host: (where the router listens on that host)")
        if router.url is not None and not re.match(r"^https?://[^/\s]+/?$", router.url):
            add(loc + ("url",), f"expected http://ADDRESS:PORT, got {router.url!r}")
        if router.admin_token is not None and not TOKEN_REF_RE.match(router.admin_token):
            add(
                loc + ("admin_token",),
                "give the token as a reference to your environment, e.g. ${SMG_ADMIN_TOKEN},"
                " never the secret itself",
            )
        seen: dict[str, int] = {}
        for index, target in enumerate(router.servers):
            where = loc + ("servers", index)
            parsed = split_target(target)
            if parsed is None:
                add(where, f"expected HOST:PORT (e.g. h200x4:30000), got {target!r}")
                continue
            host, port = parsed
            if host not in model.hosts:
                add(where, f"unknown host {host!r} (hosts: {', '.join(model.hosts) or 'none'})")
            elif not any(server.port == port for server in model.hosts[host].servers):
                ports = (
                    ", ".join(str(server.port) for server in model.hosts[host].servers) or "none"
                )
                add(where, f"{host} has no server on port {port} (configured: {ports})")
            if target in seen:
                add(where, f"{target} is already listed as servers[{seen[target]}]")
            seen.setdefault(target, index)
        for key, url in router.worker_urls.items():
            if key not in seen:
                add(loc + ("worker_urls", key), f"{key} is not one of this router's servers")
            if not re.match(r"^https?://[^/\s]+/?$", url):
                add(loc + ("worker_urls", key), f"expected http://ADDRESS:PORT, got {url!r}")
