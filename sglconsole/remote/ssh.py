"""One asyncssh connection per host, shared by every command, stream and forward.

Host keys are verified (known_hosts, or the user's default); jump hosts are
either another configured host (its connection is reused as the tunnel) or a
``user@host:port`` string; ~/.ssh/config is honoured by asyncssh itself.
Failures become typed errors with one human line (see console.errors).
"""

from __future__ import annotations

import asyncio
import logging
import os
import socket
import time
from collections.abc import AsyncIterator, Callable, Sequence
from typing import Any

import asyncssh

from sglconsole.config import Host
from sglconsole.errors import AuthError, HostKeyError, HostUnreachable, RemoteCommandFailed
from sglconsole.remote.transport import RunResult, command_line

log = logging.getLogger(__name__)

JumpResolver = Callable[[str], "SshHost"]


class _ClientEvents(asyncssh.SSHClient):
    """Remembers why a connection ended, for the UNREACHABLE reason."""

    def __init__(self, owner: SshHost):
        self._owner = owner

    def connection_lost(self, exc: Exception | None) -> None:
        self._owner._on_lost(exc)


class RemoteStream:
    """A long-running remote command read line by line (nvidia-smi -lms, the watcher)."""

    def __init__(self, host: str, argv: Sequence[str], process: asyncssh.SSHClientProcess):
        self.host = host
        self.argv = list(argv)
        self._process = process

    async def __aiter__(self) -> AsyncIterator[str]:
        try:
            async for line in self._process.stdout:
                if not line:  # EOF
                    break
                yield line.rstrip("\n")
        except (asyncssh.Error, OSError) as exc:  # the connection went away under the stream
            raise HostUnreachable(self.host, f"connection lost: {_reason(exc)}") from None

    def write(self, text: str) -> None:
        self._process.stdin.write(text)

    async def stderr_text(self, limit: int = 4096) -> str:
        try:
            return (await asyncio.wait_for(self._process.stderr.read(limit), 1.0)) or ""
        except (TimeoutError, asyncssh.Error, OSError):
            return ""

    @property
    def exit_status(self) -> int | None:
        return self._process.exit_status

    async def close(self) -> None:
        # EOF on stdin tells our own watcher to exit; closing the channel makes
        # anything else (nvidia-smi -lms) die on its next write.
        try:
            self._process.stdin.write_eof()
            if self._process.exit_status is None:
                self._process.terminate()  # where the server honours signal requests
        except (asyncssh.Error, OSError, BrokenPipeError):
            pass
        self._process.close()
        try:
            await asyncio.wait_for(self._process.wait_closed(), 2.0)
        except (TimeoutError, asyncssh.Error, OSError):
            pass


class SshHost:
    """The SSH side of one configured host."""

    def __init__(self, name: str, host: Host, jump_resolver: JumpResolver | None = None):
        self.name = name
        self.host = host
        self._jump_resolver = jump_resolver
        self._conn: asyncssh.SSHClientConnection | None = None
        self._lock = asyncio.Lock()
        self._forwards: dict[tuple[str, int], asyncssh.SSHListener] = {}
        self.last_error: str | None = None
        self.lost_at: float | None = None

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
            await asyncio.wait_for(conn.wait_closed(), grace)
        except TimeoutError:
            return True
        return False

    def command(self, argv: Sequence[str]) -> str:
        return command_line(argv, self.host.exec_prefix)

    async def connect(self) -> asyncssh.SSHClientConnection:
        async with self._lock:
            if self._conn is None:
                self._conn = await self._open()
                self.last_error = None
            return self._conn

    def _on_lost(self, exc: Exception | None) -> None:
        self._conn = None
        self._forwards.clear()
        self.lost_at = time.time()
        if exc is not None:
            self.last_error = f"connection lost: {_reason(exc)}"

    async def _open(self) -> asyncssh.SSHClientConnection:
        host = self.host
        where = f"{host.address}:{host.port}"
        options = await self._options()
        try:
            conn, _client = await asyncio.wait_for(
                asyncssh.create_connection(lambda: _ClientEvents(self), host.address, **options),
                timeout=host.connect_timeout + 1,
            )
            return conn
        except asyncssh.HostKeyNotVerifiable as exc:
            raise HostKeyError(self.name, await self._host_key_message(exc, options)) from None
        except asyncssh.PermissionDenied as exc:
            user = host.user or "(default user)"
            raise AuthError(
                self.name, f"authentication failed for {user}@{where}: {exc.reason}"
            ) from None
        except TimeoutError:
            raise HostUnreachable(
                self.name, f"timed out after {host.connect_timeout:g}s connecting to {where}"
            ) from None
        except ConnectionRefusedError:
            raise HostUnreachable(self.name, f"connection refused by {where}") from None
        except socket.gaierror as exc:
            raise HostUnreachable(
                self.name, f"cannot resolve {host.address}: {exc.strerror or exc}"
            ) from None
        except OSError as exc:
            raise HostUnreachable(
                self.name, f"cannot connect to {where}: {exc.strerror or exc}"
            ) from None
        except asyncssh.Error as exc:
            raise HostUnreachable(self.name, f"SSH to {where} failed: {exc.reason}") from None

    async def _options(self) -> dict[str, Any]:
        host = self.host
        options: dict[str, Any] = {
            "port": host.port,
            "connect_timeout": host.connect_timeout,
            "keepalive_interval": host.keepalive_interval,
            "keepalive_count_max": host.keepalive_count_max,
        }
        if host.user:
            options["username"] = host.user
        if host.identity_file:
            options["client_keys"] = [os.path.expanduser(host.identity_file)]
        if host.known_hosts == "none":
            log.warning("%s: host key checking is disabled (known_hosts: none)", self.name)
            options["known_hosts"] = None
        elif host.known_hosts:
            options["known_hosts"] = os.path.expanduser(host.known_hosts)
        if host.jump:
            options["tunnel"] = await self._tunnel(host.jump)
        return options

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

    async def _host_key_message(self, exc: Exception, options: dict[str, Any]) -> str:
        host = self.host
        target = host.address if host.port == 22 else f"[{host.address}]:{host.port}"
        known = options.get("known_hosts") or "~/.ssh/known_hosts"
        fingerprint = await self._fingerprint(options)
        seen = f" (it presents {fingerprint})" if fingerprint else ""
        if _known_hosts_has(known, host.address, host.port):
            return (
                f"host key of {target} CHANGED{seen} and does not match {known}: refusing to connect. "
                f"If the host was reinstalled, verify the new key out of band, then: ssh-keygen -R '{target}' -f {known}"
            )
        return (
            f"host key of {target} is unknown{seen}: not in {known}. Verify the fingerprint out of band, "
            f"then add it: ssh-keyscan -p {host.port} {host.address} >> {known}"
        )

    async def _fingerprint(self, options: dict[str, Any]) -> str | None:
        try:
            key = await asyncio.wait_for(
                asyncssh.get_server_host_key(
                    self.host.address, self.host.port, tunnel=options.get("tunnel", ())
                ),
                timeout=self.host.connect_timeout,
            )
        except (TimeoutError, OSError, asyncssh.Error):
            return None
        return f"{key.get_algorithm()} {key.get_fingerprint()}" if key else None

    async def close(self) -> None:
        conn, self._conn = self._conn, None
        self._forwards.clear()
        if conn is not None:
            conn.close()
            try:
                await asyncio.wait_for(conn.wait_closed(), 2.0)
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
            result = await conn.run(
                self.command(argv), input=input, timeout=timeout, errors="replace"
            )
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
            raise HostUnreachable(self.name, f"command channel failed: {_reason(exc)}") from None
        if check and not out.ok:
            raise RemoteCommandFailed(self.name, list(argv), out.exit_status, out.stderr)
        return out

    async def stream(self, argv: Sequence[str]) -> RemoteStream:
        conn = await self.connect()
        try:
            process = await conn.create_process(self.command(argv), errors="replace")
        except (asyncssh.Error, OSError) as exc:
            raise HostUnreachable(self.name, f"cannot open a channel: {_reason(exc)}") from None
        return RemoteStream(self.name, argv, process)

    async def forward(self, remote_port: int, remote_host: str = "127.0.0.1") -> int:
        """A local port on 127.0.0.1 that reaches remote_host:remote_port from the host."""
        conn = await self.connect()
        key = (remote_host, remote_port)
        listener = self._forwards.get(key)
        if listener is None:
            try:
                listener = await conn.forward_local_port("127.0.0.1", 0, remote_host, remote_port)
            except (asyncssh.Error, OSError) as exc:
                raise HostUnreachable(
                    self.name, f"port forward to {remote_host}:{remote_port} failed: {_reason(exc)}"
                ) from None
            self._forwards[key] = listener
        return listener.get_port()


def _text(value: Any) -> str:
    if value is None:
        return ""
    return value.decode("utf-8", "replace") if isinstance(value, bytes) else str(value)


def _reason(exc: BaseException) -> str:
    return (
        getattr(exc, "reason", None)
        or getattr(exc, "strerror", None)
        or str(exc)
        or type(exc).__name__
    )


def _known_hosts_has(path: str, address: str, port: int) -> bool:
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


class Fleet:
    """The SSH side of every host in a config; jump hosts resolve to each other."""

    def __init__(self, hosts: dict[str, Host]):
        self.hosts = {name: SshHost(name, host, self._resolve) for name, host in hosts.items()}

    def _resolve(self, name: str) -> SshHost:
        return self.hosts[name]

    def __getitem__(self, name: str) -> SshHost:
        return self.hosts[name]

    async def close(self) -> None:
        await asyncio.gather(*(h.close() for h in self.hosts.values()), return_exceptions=True)
