"""What SGLang's server parser gets from a launch on a host: the launcher's form undone
(`sglang serve MODEL`), and a `--config FILE` read from the host over SSH and expanded by SGLang's
own merge rule (core/config_file.py). A file that cannot be read leaves the flags unknown: an
error, never an empty file."""

from __future__ import annotations

import posixpath
from dataclasses import dataclass

from sglconsole.config.flag_tables import load_table
from sglconsole.core.config_file import ConfigFileError, config_path, expand, kinds_from_table
from sglconsole.core.launch_form import LAUNCH_SERVER, ParserArgs, parser_args
from sglconsole.errors import ConsoleError
from sglconsole.remote.sglang_args import error_line

READ_TIMEOUT_S = 15.0  # a small file on the host's own disk: anything slower is a stuck mount


@dataclass(frozen=True)
class HostArgs:
    """One launch's arguments as SGLang's parser gets them on this host."""

    args: list[str]
    config_file: str | None = None
    """The `--config` file as read (absolute on the host); None without one."""
    config_text: str | None = None
    error: str | None = None

    @property
    def note(self) -> str | None:
        if self.config_file is None or self.error:
            return None
        return f"--config {self.config_file}: its keys compared as the file reads now"


def _kinds(version: str | None):
    try:
        table = load_table(version)
    except ConsoleError:  # older than every shipped table: the oldest rule is nearest
        table = load_table(None)
    return kinds_from_table(table["actions"], version)


async def read_host_file(ssh, path: str) -> tuple[str | None, str | None]:
    """(text, None) or (None, why it could not be read); argv, never a shell line."""
    result = await ssh.run(["cat", "--", path], timeout=READ_TIMEOUT_S)
    if result.ok:
        return result.stdout, None
    why = error_line(result.stderr or "") if result.stderr.strip() else "no output"
    if result.exit_status is None:
        why = f"timed out after {READ_TIMEOUT_S:g}s"
    return None, why


async def host_args(ssh, launch: ParserArgs, version: str | None, cwd: str | None) -> HostArgs:
    """`launch` (from core.launch_form.parser_args) with its `--config` file, if any, expanded."""
    if launch.problem:
        return HostArgs(list(launch.args), error=f"{ssh.name}: {launch.problem}")
    args = list(launch.args)
    try:
        path = config_path(args)
    except ConfigFileError as exc:
        return HostArgs(args, error=f"{ssh.name}: --config: {exc}")
    if path is None:
        return HostArgs(args)
    if not posixpath.isabs(path):  # SGLang opens it relative to the server's working directory
        if not cwd:
            return HostArgs(
                args,
                error=f"{ssh.name}: --config {path} is relative and the server's working "
                "directory is unknown: the flags it sets are unknown",
            )
        path = posixpath.join(cwd, path)
    text, why = await read_host_file(ssh, path)
    if text is None:
        return HostArgs(
            args,
            config_file=path,
            error=f"{ssh.name}: --config {path} could not be read ({why}): "
            "the flags it sets are unknown",
        )
    try:
        expanded = expand(args, text, _kinds(version))
    except ConfigFileError as exc:
        return HostArgs(
            args, config_file=path, config_text=text, error=f"{ssh.name}: {path}: {exc}"
        )
    return HostArgs(expanded, config_file=path, config_text=text)


async def profile_args(ssh, args: list[str], version: str | None, cwd: str | None) -> HostArgs:
    """A profile's side: always launched as `python -m sglang.launch_server ARGS`."""
    return await host_args(ssh, ParserArgs(tuple(args), LAUNCH_SERVER), version, cwd)


async def running_args(
    ssh, argv: tuple[str, ...], version: str | None, cwd: str | None
) -> HostArgs:
    """A running process's side, from its whole argv."""
    return await host_args(ssh, parser_args(argv, version), version, cwd)
