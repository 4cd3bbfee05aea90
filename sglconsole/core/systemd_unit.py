"""Read a systemd unit's command, environment and working directory (pure).

Follows systemd.syntax/systemd.service rules as far as a launch command
needs: backslash line continuations, comments, the last ExecStart= winning
(an empty one resets), ExecStart prefixes (-@:+!), double and single quotes
and backslash escapes in words, ${VAR} and $VAR substitution from
Environment=, and Environment= holding several (quoted) assignments.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass, field

_VAR = re.compile(r"\$\{(\w+)\}")
_WORD_VAR = re.compile(r"^\$(\w+)$")


@dataclass
class ServiceCommand:
    argv: list[str]
    env: dict[str, str] = field(default_factory=dict)
    env_files: list[str] = field(default_factory=list)
    workdir: str | None = None
    user: str | None = None


def logical_lines(text: str) -> list[str]:
    """Lines with continuations joined and comments dropped."""
    out: list[str] = []
    pending = ""
    for raw in text.splitlines():
        stripped = raw.strip()
        if not pending and (not stripped or stripped[0] in "#;"):
            continue
        if pending and stripped[:1] in ("#", ";"):
            continue  # a comment inside a continued line is skipped
        if stripped.endswith("\\"):
            pending += stripped[:-1] + " "
            continue
        out.append(pending + stripped)
        pending = ""
    if pending:
        out.append(pending)
    return out


def service_entries(text: str) -> list[tuple[str, str]]:
    section = None
    entries = []
    for line in logical_lines(text):
        if line.startswith("[") and line.endswith("]"):
            section = line[1:-1]
        elif section == "Service" and "=" in line:
            key, _, value = line.partition("=")
            entries.append((key.strip(), value.strip()))
    return entries


def parse_environment(value: str) -> dict[str, str]:
    env = {}
    for word in shlex.split(value):
        key, sep, val = word.partition("=")
        if sep and key:
            env[key] = val
    return env


def parse_env_file(text: str) -> dict[str, str]:
    env = {}
    for line in logical_lines(text):
        key, sep, value = line.partition("=")
        if not sep:
            continue
        value = value.strip()
        if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
            value = value[1:-1]
        env[key.strip().removeprefix("export ").strip()] = value
    return env


def split_exec(value: str, env: dict[str, str]) -> list[str]:
    value = value.lstrip("-@:+!")
    words = shlex.split(value)
    out: list[str] = []
    for word in words:
        whole = _WORD_VAR.match(word)
        if whole:  # $VAR as a whole word splits into words, like systemd does
            out.extend(env.get(whole.group(1), "").split())
            continue
        out.append(_VAR.sub(lambda hit: env.get(hit.group(1), ""), word))
    return out


def parse_unit(text: str, env_files: dict[str, str] | None = None) -> ServiceCommand:
    """`env_files` maps an EnvironmentFile path to its content (read on the host)."""
    exec_start: str | None = None
    command = ServiceCommand([])
    from_files: dict[str, str] = {}
    for key, value in service_entries(text):
        if key == "ExecStart":
            exec_start = value or None
        elif key == "Environment":
            command.env.update(parse_environment(value))
        elif key == "EnvironmentFile":
            path = value.lstrip("-")
            command.env_files.append(path)
            from_files.update(parse_env_file((env_files or {}).get(path, "")))
        elif key == "WorkingDirectory":
            command.workdir = value.lstrip("-") or None
        elif key == "User":
            command.user = value
    command.env.update(from_files)  # systemd: EnvironmentFile= overrides Environment=
    if exec_start is None:
        raise ValueError("the unit has no ExecStart= in its [Service] section")
    command.argv = split_exec(exec_start, command.env)
    return command
