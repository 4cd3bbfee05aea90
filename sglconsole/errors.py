"""The errors sglconsole reports to people.

Every error a user can cause or meet carries a one-line human message; the CLI
prints it to stderr and exits 2, the TUI shows it next to the host it concerns.

    ConsoleError
    ├── ConfigError            hosts.yaml is missing, unparsable or invalid (file:line: field: ...)
    ├── RemoteError            something on a host went wrong
    │   ├── HostUnreachable    connect refused / timed out / dropped
    │   ├── HostKeyError       unknown or changed host key (never silently accepted)
    │   ├── AuthError          the host refused our credentials
    │   └── RemoteCommandFailed  a command ran and failed (exit status, stderr)
    ├── ActionError            an action (kill, relaunch, ...) refused or failed
    └── UsageError             a bad command line (unknown HOST:PORT, ...)
"""

from __future__ import annotations


class ConsoleError(Exception):
    """Base of every error meant for a human; str() is the message."""


class ConfigError(ConsoleError):
    """hosts.yaml problems; `problems` holds one line per problem."""

    def __init__(self, problems: list[str] | str):
        self.problems = [problems] if isinstance(problems, str) else list(problems)
        super().__init__("\n".join(self.problems))


class UsageError(ConsoleError):
    pass


class RemoteError(ConsoleError):
    def __init__(self, host: str, message: str):
        self.host = host
        self.message = message
        super().__init__(f"{host}: {message}")


class HostUnreachable(RemoteError):
    pass


class HostKeyError(RemoteError):
    pass


class AuthError(RemoteError):
    pass


class RemoteCommandFailed(RemoteError):
    def __init__(self, host: str, argv: list[str], exit_status: int | None, stderr: str):
        self.argv = argv
        self.exit_status = exit_status
        self.stderr = stderr
        last = stderr.strip().splitlines()[-1] if stderr.strip() else ""
        what = "timed out" if exit_status is None else f"exited {exit_status}"
        detail = f": {last}" if last else ""
        super().__init__(host, f"{argv[0] if argv else '?'} {what}{detail}")


class ActionError(ConsoleError):
    pass
