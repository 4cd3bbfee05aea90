"""One asyncssh connection per host, shared by every command, stream and forward.
A forward's local end is a private UNIX socket (`forward_sockets`), never a TCP port.

Host keys are verified (known_hosts, or the user's default); jump hosts are
either another configured host (its connection is reused as the tunnel) or a
``user@host:port`` string.

Precedence, as with ``ssh``: what hosts.yaml sets, then the host's OpenSSH client
config (``ssh_config:``, default ~/.ssh/config: HostName, Port, User, IdentityFile,
ProxyJump, ConnectTimeout, ServerAlive*), then the console's defaults (see
`resolve`). A passphrase-protected identity file is used through the ssh-agent
that holds it. Failures become typed errors with one human line (see
console.errors), naming the file when a file is the problem.
"""

from __future__ import annotations

import asyncio
import logging
import os
import socket
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import asyncssh

from sglconsole.config import Host
from sglconsole.core.deadline import within
from sglconsole.errors import AuthError, HostKeyError, HostUnreachable, RemoteCommandFailed
from sglconsole.remote.ssh import forward_sockets
from sglconsole.remote.ssh.auth import (
    agent_holds,
    host_key_message,
    locked_key_message,
    no_known_hosts_message,
    public_key_of,
)
from sglconsole.remote.ssh.stream import RemoteStream
from sglconsole.remote.ssh.target import (
    FAST_CIPHERS_FIRST,
    Target,
    reason_of,
    resolve,
)
from sglconsole.remote.ssh.transport import RunResult, command_line, quote

if TYPE_CHECKING:
    from sglconsole.remote.endpoint import Endpoint

log = logging.getLogger(__name__)

JumpResolver = Callable[[str], "SshHost"]


class _ClientEvents(asyncssh.SSHClient):
    """Remembers why a connection ended, for the UNREACHABLE reason."""

    def __init__(self, owner: SshHost):
        self._owner = owner

    def connection_made(self, conn: asyncssh.SSHClientConnection) -> None:
        self._conn = conn

    def connection_lost(self, exc: Exception | None) -> None:  # its forwards go with it
        self._owner._on_lost(exc, getattr(self, "_conn", None))


@dataclass(frozen=True)
class _Forward:
    conn: asyncssh.SSHClientConnection
    listener: asyncssh.SSHListener
    endpoint: Endpoint


class SshHost:
    """The SSH side of one configured host."""

    def __init__(self, name: str, host: Host, jump_resolver: JumpResolver | None = None):
        self.name = name
        self.host = host
        self._jump_resolver = jump_resolver
        self._conn: asyncssh.SSHClientConnection | None = None
        self._lock = asyncio.Lock()
        self._forwards: dict[tuple[str, int], _Forward] = {}
        self._forward_lock = asyncio.Lock()
        self._early: asyncio.Future | None = None
        self.last_error: str | None = None

    # ------------------------------------------------------------ connection

    @property
    def connected(self) -> bool:
        return self._conn is not None and not self._conn.is_closed()

    async def still_connected(self, grace: float = 1.0) -> bool:
        """After a channel ended without an exit status: was it the connection? (its close event
        can land a moment after the channel's EOF)."""
        conn = self._conn
        if conn is None or conn.is_closed():
            return False
        try:
            await within(conn.wait_closed(), grace)
        except TimeoutError:
            return True
        return False

    async def _channel_failure(self, exc: BaseException) -> str:
        """Why a channel failed: when its connection ended, the connection's reason (a keepalive
        timeout), not the channel's 'SSH connection closed', which comes a moment before it."""
        if not await self.still_connected() and self.last_error:
            return self.last_error
        return reason_of(exc)

    def command(self, argv: Sequence[str]) -> str:
        """The remote command as a person reads it (dry runs): the code of `python -c CODE` is
        shown as written; on the wire it travels base64-encoded (see `transport.command_line`)."""
        return " ".join(quote(str(arg)) for arg in [*self.host.exec_prefix, *argv])

    def wire(self, argv: Sequence[str]) -> str:
        """The remote command exactly as sent: any login shell (sh, bash, tcsh, fish) splits it."""
        return command_line(argv, self.host.exec_prefix)

    def connect_soon(self) -> None:
        """Start connecting now, in the background: the next `connect()` gets this attempt's
        outcome, its failure included (a one-shot status connects before it imports what reads
        the hosts, so a host that never answers is not waited for longer)."""
        if self._early is None and self._conn is None:
            self._early = asyncio.ensure_future(self._connect())

    async def connect(self) -> asyncssh.SSHClientConnection:
        early, self._early = self._early, None
        if early is not None:
            return await early
        return await self._connect()

    async def _connect(self) -> asyncssh.SSHClientConnection:
        async with self._lock:
            if self._conn is None:
                self._conn = await self._open()
                self.last_error = None
            return self._conn

    def _on_lost(self, exc: Exception | None, conn: Any = None) -> None:
        if conn is not None and self._conn not in (None, conn):
            return  # a connection already replaced (closed, then a new one opened)
        self._conn = None
        self._drop_forwards(conn)
        if exc is not None:
            self.last_error = f"connection lost: {reason_of(exc)}"

    async def _open(self) -> asyncssh.SSHClientConnection:
        target = resolve(self.host, self.name)
        where = target.where
        options = await self._options(target)
        try:
            # the connect timeout counts from here: asyncssh's own starts only once a thread has
            # built its options, which a busy loop (a command still importing) hears of later
            conn, _client = await within(
                asyncssh.create_connection(
                    lambda: _ClientEvents(self), self.host.address, **options
                ),
                timeout=target.connect_timeout,
            )
            return conn
        except asyncssh.HostKeyNotVerifiable:
            message = await host_key_message(options, target)
            raise HostKeyError(self.name, message) from None
        except asyncssh.PermissionDenied as exc:
            hint = await self._locked_config_key(target)
            raise AuthError(
                self.name,
                hint or f"authentication failed for {target.user}@{where}: {exc.reason}",
            ) from None
        except TimeoutError:
            raise HostUnreachable(
                self.name, f"timed out after {target.connect_timeout:g}s connecting to {where}"
            ) from None
        except ConnectionRefusedError:
            raise HostUnreachable(self.name, f"connection refused by {where}") from None
        except socket.gaierror as exc:
            raise HostUnreachable(
                self.name, f"cannot resolve {target.hostname}: {exc.strerror or exc}"
            ) from None
        except OSError as exc:
            named = f" ({exc.filename})" if getattr(exc, "filename", None) else ""
            raise HostUnreachable(
                self.name, f"cannot connect to {where}: {exc.strerror or exc}{named}"
            ) from None
        except asyncssh.Error as exc:
            raise HostUnreachable(self.name, f"SSH to {where} failed: {exc.reason}") from None

    async def _options(self, target: Target) -> dict[str, Any]:
        """Only what hosts.yaml sets is given to asyncssh (it reads the rest from the ssh_config),
        plus the timeouts, which asyncssh would otherwise leave unlimited."""
        host = self.host
        options: dict[str, Any] = {
            "config": target.config_files,
            "connect_timeout": target.connect_timeout,
            "keepalive_interval": target.keepalive_interval,
            "keepalive_count_max": target.keepalive_count_max,
        }
        if "ciphers" not in target.from_ssh_config:
            options["encryption_algs"] = FAST_CIPHERS_FIRST
        if host.port is not None:
            options["port"] = host.port
        if host.user:
            options["username"] = host.user
        if host.identity_file:
            options.update(await self._identity(host.identity_file, target))
        else:
            for path in target.identity_files:
                if not os.path.exists(os.path.expanduser(path)):
                    raise AuthError(
                        self.name,
                        f"identity file {path} does not exist (IdentityFile in ssh_config)",
                    )
        if host.known_hosts == "none":
            log.warning("%s: host key checking is disabled (known_hosts: none)", self.name)
            options["known_hosts"] = None
        elif host.known_hosts:
            path = os.path.expanduser(host.known_hosts)
            if not os.path.exists(path):
                raise HostKeyError(
                    self.name, no_known_hosts_message(host.known_hosts, target, "hosts.yaml")
                )
            options["known_hosts"] = path
        else:
            for path in target.known_hosts_files:
                if not os.path.exists(os.path.expanduser(path)):
                    raise HostKeyError(
                        self.name, no_known_hosts_message(path, target, "ssh_config")
                    )
        if host.jump:
            options["tunnel"] = await self._tunnel(host.jump)
        return options

    async def _identity(self, written: str, target: Target) -> dict[str, Any]:
        """client_keys for hosts.yaml's identity_file; a passphrase-protected one through the
        ssh-agent that holds it (asyncssh would fail with KeyImportError)."""
        path = os.path.expanduser(written)
        if not os.path.exists(path):
            raise AuthError(self.name, f"identity file {written} does not exist (hosts.yaml)")
        try:
            asyncssh.read_private_key(path)
        except asyncssh.KeyImportError as exc:
            if "passphrase" not in str(exc).lower():
                raise AuthError(
                    self.name, f"identity file {written} is not a usable private key: {exc}"
                ) from None
        except OSError as exc:
            raise AuthError(
                self.name, f"cannot read identity file {written}: {exc.strerror or exc}"
            ) from None
        else:
            return {"client_keys": [path]}
        public = public_key_of(path)
        if public is None or not await agent_holds(public, target.identity_agent):
            raise AuthError(self.name, locked_key_message(written))
        # the encrypted file is skipped; of the agent's keys, only this one is offered
        return {"client_keys": [path], "ignore_encrypted": True, "agent_identities": [public]}

    async def _locked_config_key(self, target: Target) -> str | None:
        """After a refusal: the ssh_config's passphrase-protected IdentityFile no agent holds."""
        if self.host.identity_file:
            return None
        for written in target.identity_files:
            path = os.path.expanduser(written)
            try:
                asyncssh.read_private_key(path)
                continue
            except (OSError, asyncssh.KeyImportError) as exc:
                if "passphrase" not in str(exc).lower():
                    continue
            public = public_key_of(path)
            if public is None or not await agent_holds(public, target.identity_agent):
                return locked_key_message(written)
        return None

    async def _tunnel(self, jump: str) -> Any:
        if self._jump_resolver is not None:
            try:
                other = self._jump_resolver(jump)
            except KeyError:
                other = None
            if other is not None:
                try:
                    return await other.connect()
                except HostUnreachable as exc:
                    raise HostUnreachable(self.name, f"jump host {jump}: {exc.message}") from None
        return jump  # user@host:port: asyncssh opens it itself

    async def close(self) -> None:
        early, self._early = self._early, None
        if early is not None:  # started and never asked for
            early.cancel()
            await asyncio.gather(early, return_exceptions=True)
        conn, self._conn = self._conn, None
        self._drop_forwards()
        if conn is not None:
            conn.close()
            try:
                await within(conn.wait_closed(), 2.0)
            except (TimeoutError, asyncssh.Error, OSError):
                pass

    # -------------------------------------------------------------- commands

    async def run(
        self,
        argv: Sequence[str],
        *,
        timeout: float = 30,
        input: str | None = None,
        check: bool = False,
    ) -> RunResult:
        conn = await self.connect()
        try:
            result = await conn.run(self.wire(argv), input=input, timeout=timeout, errors="replace")
            out = RunResult(
                tuple(argv), result.exit_status, _text(result.stdout), _text(result.stderr)
            )
        except asyncssh.TimeoutError as exc:
            out = RunResult(
                tuple(argv),
                None,
                _text(exc.stdout),
                _text(exc.stderr) or f"timed out after {timeout:g}s",
            )
        except (asyncssh.Error, OSError) as exc:
            why = await self._channel_failure(exc)
            raise HostUnreachable(self.name, f"command channel failed: {why}") from None
        if check and not out.ok:
            raise RemoteCommandFailed(self.name, list(argv), out.exit_status, out.stderr)
        return out

    async def stream(self, argv: Sequence[str]) -> RemoteStream:
        conn = await self.connect()
        try:
            process = await conn.create_process(self.wire(argv), errors="replace")
        except (asyncssh.Error, OSError) as exc:
            why = await self._channel_failure(exc)
            raise HostUnreachable(self.name, f"cannot open a channel: {why}") from None
        return RemoteStream(self.name, argv, process)

    async def forward(self, remote_port: int, remote_host: str = "127.0.0.1") -> Endpoint:
        """The endpoint of remote_host:remote_port as the host reaches it, through a private local
        UNIX socket (one per remote address and port, kept while the connection lives)."""
        conn = await self.connect()
        key = (remote_host, remote_port)
        async with self._forward_lock:
            known = self._forwards.get(key)
            if known is not None and known.conn is conn:
                return known.endpoint
            if known is not None:  # of a connection that is gone
                forward_sockets.close_forward(known.listener, known.endpoint.socket)
            try:
                listener, path = await forward_sockets.open_forward(conn, remote_host, remote_port)
            except (asyncssh.Error, OSError) as exc:
                raise HostUnreachable(
                    self.name,
                    f"port forward to {remote_host}:{remote_port} failed: {reason_of(exc)}",
                ) from None
            from sglconsole.remote.endpoint import Endpoint  # httpx: once a host is reached

            endpoint = Endpoint.forwarded(remote_host, remote_port, path)
            self._forwards[key] = _Forward(conn, listener, endpoint)
            return endpoint

    def _drop_forwards(self, conn: Any = None) -> None:
        """Close the forwards of CONN (of every connection when None) and remove their sockets."""
        for key, forward in list(self._forwards.items()):
            if conn is None or forward.conn is conn:
                del self._forwards[key]
                forward_sockets.close_forward(forward.listener, forward.endpoint.socket)


def _text(value: Any) -> str:
    if value is None:
        return ""
    return value.decode("utf-8", "replace") if isinstance(value, bytes) else str(value)


class SshFleet:
    """The SSH side of every host in a config; jump hosts resolve to each other."""

    def __init__(self, hosts: dict[str, Host]):
        self.hosts = {name: SshHost(name, host, self._resolve) for name, host in hosts.items()}

    def _resolve(self, name: str) -> SshHost:
        return self.hosts[name]

    def __getitem__(self, name: str) -> SshHost:
        return self.hosts[name]

    async def close(self) -> None:
        await asyncio.gather(
            *(host.close() for host in self.hosts.values()), return_exceptions=True
        )
