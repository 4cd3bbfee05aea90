"""Keys and host keys for an SSH login: whether the agent holds a passphrase-protected key, whether
known_hosts names a host at all, and the one-line errors that name the file at fault."""

from __future__ import annotations

import os
from typing import Any

import asyncssh

from sglconsole.core.deadline import within
from sglconsole.remote.ssh.target import Target


def locked_key_message(written: str) -> str:
    return (
        f"identity file {written} is passphrase-protected and no ssh-agent holds it: "
        f"ssh-add {written}"
    )


def no_known_hosts_message(written: str, target: Target, source: str) -> str:
    return (
        f"known_hosts file {written} does not exist ({source}): create it with the host's key, "
        f"checked out of band: ssh-keyscan -p {target.port} {target.hostname} >> {written}"
    )


def public_key_of(path: str) -> asyncssh.SSHKey | None:
    """The public half of a (possibly encrypted) private key: OpenSSH's format carries it in
    clear; other formats need the .pub file beside it."""
    for candidate in (path, path + ".pub"):
        try:
            return asyncssh.read_public_key(candidate)
        except (OSError, ValueError, asyncssh.KeyImportError):
            continue
    return None


async def agent_holds(public: asyncssh.SSHKey, agent_path: str | None) -> bool:
    path = os.path.expanduser(agent_path) if agent_path else os.environ.get("SSH_AUTH_SOCK", "")
    if not path:
        return False
    try:
        async with await asyncssh.connect_agent(path) as agent:
            keys = await within(agent.get_keys(), 5.0)
    except (OSError, TimeoutError, asyncssh.Error, ValueError):
        return False
    return any(key.public_data == public.public_data for key in keys)


def known_hosts_has(path: str, address: str, port: int) -> bool:
    """Whether known_hosts names this host at all (then a mismatch means a changed key)."""
    try:
        known = asyncssh.read_known_hosts(os.path.expanduser(path))
    except (OSError, ValueError, asyncssh.Error):
        return False
    try:
        host_keys, ca_keys, *_ = known.match(address, "", port)
    except (ValueError, TypeError):
        return False
    return bool(host_keys or ca_keys)


async def host_key_message(options: dict[str, Any], target: Target) -> str:
    """Why the host key was refused: CHANGED (known_hosts names the host) or unknown, with the
    fingerprint it presents and the command that fixes it once verified out of band."""
    address, port = target.hostname, target.port
    shown = address if port == 22 else f"[{address}]:{port}"
    known = options.get("known_hosts") or (
        target.known_hosts_files[0] if target.known_hosts_files else "~/.ssh/known_hosts"
    )
    fingerprint = await _fingerprint(options, target)
    seen = f" (it presents {fingerprint})" if fingerprint else ""
    if known_hosts_has(known, address, port):
        return (
            f"host key of {shown} CHANGED{seen} and does not match {known}: refusing to "
            "connect. If the host was reinstalled, verify the new key out of band, then: "
            f"ssh-keygen -R '{shown}' -f {known}"
        )
    return (
        f"host key of {shown} is unknown{seen}: not in {known}. Verify the fingerprint out "
        f"of band, then add it: ssh-keyscan -p {port} {address} >> {known}"
    )


async def _fingerprint(options: dict[str, Any], target: Target) -> str | None:
    tunnel = options.get("tunnel", target.proxy_jump or ())
    try:
        key = await within(
            asyncssh.get_server_host_key(
                target.hostname, target.port, tunnel=tunnel, config=target.config_files
            ),
            timeout=target.connect_timeout,
        )
    except (TimeoutError, OSError, asyncssh.Error):
        return None
    return f"{key.get_algorithm()} {key.get_fingerprint()}" if key else None
