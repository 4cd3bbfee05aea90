"""Where and how one host is reached: hosts.yaml first, then the host's OpenSSH client config
(HostName, Port, User, IdentityFile, ProxyJump, ConnectTimeout, ServerAlive*), then the console's
defaults, as `ssh` itself decides."""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any

import asyncssh

from sglconsole.config import Host
from sglconsole.errors import HostUnreachable

DEFAULT_CONNECT_TIMEOUT = 10.0
DEFAULT_KEEPALIVE_INTERVAL = 5.0
"""asyncssh's own default is no keepalive at all: a dead host would hang a feed forever."""
DEFAULT_KEEPALIVE_COUNT_MAX = 3
FAST_CIPHERS_FIRST = "^aes128-gcm@openssh.com,aes256-gcm@openssh.com"
"""asyncssh's own order, AES-GCM moved first (unless the ssh_config names Ciphers): its ChaCha20
takes three cipher set-ups a packet in Python, AES-GCM one call. An idle console receives packets
all the time (GPU samples, polls): a streamed line cost it 543 µs with ChaCha20, ~485 with GCM."""


@dataclass(frozen=True)
class Target:
    """Where and how one host is reached, once hosts.yaml and its ssh_config have both spoken."""

    address: str
    """As hosts.yaml names it: an address, or a Host alias of the ssh_config."""
    hostname: str
    port: int
    user: str
    connect_timeout: float
    keepalive_interval: float
    keepalive_count_max: int
    config_files: list[str] | None
    """The OpenSSH client config files read (None: none, `ssh_config: none`)."""
    identity_files: tuple[str, ...]
    """From the ssh_config's IdentityFile (hosts.yaml's identity_file is used instead if set)."""
    known_hosts_files: tuple[str, ...]
    """From the ssh_config's UserKnownHostsFile (hosts.yaml's known_hosts is used instead)."""
    proxy_jump: str | None
    identity_agent: str | None
    from_ssh_config: frozenset[str]
    """Which of hostname, port, user, connect_timeout, keepalive, Ciphers the ssh_config set."""

    @property
    def where(self) -> str:
        endpoint = f"{self.hostname}:{self.port}"
        return endpoint if self.hostname == self.address else f"{self.address} ({endpoint})"

    @property
    def ssh(self) -> str:
        """user@hostname:port, for tables."""
        return f"{self.user}@{self.hostname}:{self.port}"


def config_files(host: Host) -> list[str] | None:
    """The OpenSSH client config files asyncssh reads for a host (None: `ssh_config: none`)."""
    if host.ssh_config == "none":
        return None
    if host.ssh_config:
        return [os.path.expanduser(host.ssh_config)]
    default = os.path.expanduser("~/.ssh/config")
    return [default] if os.access(default, os.R_OK) else []


def resolve(host: Host, name: str | None = None) -> Target:
    """hosts.yaml's values, else the ssh_config's, else the console's defaults (raises
    HostUnreachable naming the ssh_config file when it cannot be read)."""
    files = config_files(host)
    for path in files or ():
        if not os.path.exists(path):
            raise HostUnreachable(
                name or host.address,
                f"ssh_config file {path} does not exist (hosts.yaml ssh_config)",
            )
    try:
        options = asyncssh.SSHClientConnectionOptions(
            host=host.address,
            port=host.port or (),
            username=host.user or (),
            config=files,
            client_keys=None,  # only the config is wanted here: keys are checked by the caller
            known_hosts=None,
        )
    except (OSError, ValueError, asyncssh.Error) as exc:
        where = ", ".join(files or ()) or "ssh_config"
        raise HostUnreachable(
            name or host.address, f"cannot use {where}: {reason_of(exc)}"
        ) from None
    config = options.config
    from_config = {
        key
        for key, option, explicit in (
            ("hostname", "Hostname", False),
            ("port", "Port", host.port),
            ("user", "User", host.user),
            ("connect_timeout", "ConnectTimeout", host.connect_timeout),
            ("keepalive_interval", "ServerAliveInterval", host.keepalive_interval),
            ("keepalive_count_max", "ServerAliveCountMax", host.keepalive_count_max),
            ("ciphers", "Ciphers", None),
        )
        if not explicit and config.get(option) is not None
    }

    def pick(explicit: Any, option: str, default: Any) -> Any:
        if explicit is not None:
            return explicit
        value = config.get(option)
        return default if value is None else value

    jump = config.get("ProxyJump")
    agent = config.get("IdentityAgent")
    return Target(
        address=host.address,
        hostname=str(options.host),
        port=int(options.port),
        user=str(options.username),
        connect_timeout=float(
            pick(host.connect_timeout, "ConnectTimeout", DEFAULT_CONNECT_TIMEOUT)
        ),
        keepalive_interval=float(
            pick(host.keepalive_interval, "ServerAliveInterval", DEFAULT_KEEPALIVE_INTERVAL)
        ),
        keepalive_count_max=int(
            pick(host.keepalive_count_max, "ServerAliveCountMax", DEFAULT_KEEPALIVE_COUNT_MAX)
        ),
        config_files=files,
        identity_files=tuple(str(path) for path in config.get("IdentityFile") or ()),
        known_hosts_files=tuple(str(path) for path in config.get("UserKnownHostsFile") or ()),
        proxy_jump=str(jump) if jump and str(jump).lower() != "none" else None,
        identity_agent=str(agent) if agent else None,
        from_ssh_config=frozenset(from_config),
    )


def connect_timeout(host: Host) -> float:
    """The host's effective connect timeout (the console's default if its ssh_config is broken)."""
    try:
        return resolve(host).connect_timeout
    except HostUnreachable:
        return host.connect_timeout or DEFAULT_CONNECT_TIMEOUT


def reason_of(exc: BaseException) -> str:
    return (
        getattr(exc, "reason", None)
        or getattr(exc, "strerror", None)
        or str(exc)
        or type(exc).__name__
    )
