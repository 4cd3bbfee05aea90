"""hosts.yaml: discovery, loading, and validation errors that name file, line and key.

The file is parsed with PyYAML's composer so every key keeps its line number,
then validated by strict pydantic models (unknown keys are errors). Every
problem becomes one line: ``hosts.yaml:14: hosts.ct129.servers[0].port:
expected an integer 1-65535, got 'abc'``.
"""

from __future__ import annotations

import difflib
import os
import re
from pathlib import Path
from typing import Any

import yaml
from pydantic import ValidationError

from sglconsole.config.container import check_containers
from sglconsole.config.flag_check import flag_problems
from sglconsole.config.problems import dotted, lookup_line, validation_problems
from sglconsole.config.routers import check_routers
from sglconsole.config.schema import NAME_RE, Config, Host, HostsFile
from sglconsole.core.launch_form import flag  # not core.processes: nvidia-smi's parsers too
from sglconsole.errors import ConfigError

CONFIG_ENV = "SGLCONSOLE_CONFIG"


# ------------------------------------------------------------------ discovery


def candidates() -> list[Path]:
    """Where hosts.yaml is looked for without -c or $SGLCONSOLE_CONFIG, in order:
    ./hosts.yaml, ~/.config/sglconsole/hosts.yaml, $XDG_CONFIG_HOME/sglconsole/hosts.yaml."""
    found = [Path("hosts.yaml"), Path.home() / ".config" / "sglconsole" / "hosts.yaml"]
    xdg = os.environ.get("XDG_CONFIG_HOME", "")
    if os.path.isabs(xdg):  # the XDG spec: a relative value is invalid and ignored
        found.append(Path(xdg) / "sglconsole" / "hosts.yaml")
    return list(dict.fromkeys(found))


def discover(cli_path: str | os.PathLike | None = None) -> Path:
    """-c PATH, then $SGLCONSOLE_CONFIG, then the first of candidates() that exists."""
    if cli_path:
        return Path(cli_path)
    if os.environ.get(CONFIG_ENV):
        return Path(os.environ[CONFIG_ENV])
    tried = candidates()
    for candidate in tried:
        if candidate.is_file():
            return candidate
    looked = ", ".join(str(candidate) for candidate in tried)
    raise ConfigError(
        f"no hosts.yaml found (give -c PATH or set ${CONFIG_ENV}; looked in {looked})"
    )


def load(cli_path: str | os.PathLike | None = None) -> Config:
    path = discover(cli_path)
    model, lines = _parse(_read(path), str(path))
    return Config(model, path, lines)


def check_file(cli_path: str | os.PathLike | None = None) -> tuple[Config | None, list[str]]:
    """Every problem `check` can name at once, in line order: the schema's, the cross-checks'
    (once the schema passes), SGLang flags the shipped tables refuse (read from the file as
    written, so they are named even when the schema fails) and missing files (of every host
    whose own entry is valid); the config when the file has no problem pydantic or the
    cross-checks find."""
    path = discover(cli_path)
    filename = str(path)
    text = _read(path)
    data, lines = _compose(text, filename)  # a YAML syntax error: nothing more can be read
    profiles = data.get("profiles") if isinstance(data, dict) else None
    problems = flag_problems(profiles, lines, filename)
    try:
        model, lines = _validate(text, filename)
    except ConfigError as exc:
        hosts = _hosts_that_parse(data)
        found = exc.problems + problems + _host_file_problems(hosts, lines, filename)
        return None, sorted(dict.fromkeys(found), key=_line_of)
    cfg = Config(model, path, lines)
    crossed = _cross_check(model, lines, filename)
    found = crossed + problems + file_problems(cfg)
    return (None if crossed else cfg), sorted(dict.fromkeys(found), key=_line_of)


def _hosts_that_parse(data: Any) -> dict[str, Host]:
    """The hosts whose own entry (with `defaults:`) validates, from a file that does not."""
    hosts = data.get("hosts") if isinstance(data, dict) else None
    if not isinstance(hosts, dict):
        return {}
    merged = _merge_defaults(data)["hosts"]
    parsed = {}
    for name, entry in merged.items():
        try:
            parsed[str(name)] = Host.model_validate(entry)
        except ValidationError:
            continue
    return parsed


def _read(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ConfigError(f"{path}: no such file") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{path}: cannot read: {exc}") from None


# -------------------------------------------------------------------- parsing


Path_ = tuple  # a location inside the document: ("hosts", "ct129", "servers", 0, "port")


def parse(text: str, filename: str = "hosts.yaml") -> HostsFile:
    return _parse(text, filename)[0]


def _parse(text: str, filename: str) -> tuple[HostsFile, dict[Path_, int]]:
    model, lines = _validate(text, filename)
    problems = _cross_check(model, lines, filename)
    if problems:
        raise ConfigError(problems)
    return model, lines


def _validate(text: str, filename: str) -> tuple[HostsFile, dict[Path_, int]]:
    """The schema alone (pydantic), before the cross-checks between its parts."""
    data, lines = _compose(text, filename)
    if data is None:
        raise ConfigError(f"{filename}:1: the file is empty (expected a 'hosts:' mapping)")
    if not isinstance(data, dict):
        raise ConfigError(
            f"{filename}:1: expected a mapping with 'hosts:' at the top, got {type(data).__name__}"
        )
    merged = _merge_defaults(data)
    try:
        model = HostsFile.model_validate(merged)
    except ValidationError as exc:
        raise ConfigError(
            sorted(validation_problems(exc, lines, filename, merged), key=_line_of)
        ) from None
    return model, lines


FILE_KEYS = {
    "identity_file": "identity file",
    "known_hosts": "known_hosts file",
    "ssh_config": "ssh_config file",
}


def file_problems(cfg: Config) -> list[str]:
    """The files hosts.yaml names (identity_file, known_hosts, ssh_config) that are missing or
    unreadable here, as `file:line: field: problem` (a valid hosts.yaml may still name them)."""
    return _host_file_problems(cfg.hosts, cfg.lines, str(cfg.path or "hosts.yaml"))


def _host_file_problems(
    hosts: dict[str, Host], lines: dict[Path_, int], filename: str
) -> list[str]:
    problems = []
    for name, host in hosts.items():
        for key, what in FILE_KEYS.items():
            written = getattr(host, key)
            if not written or written == "none":
                continue
            path = os.path.expanduser(written)
            if not os.path.exists(path):
                problem = f"{what} {written} does not exist"
            elif not os.access(path, os.R_OK) or os.path.isdir(path):
                problem = f"{what} {written} is not a readable file"
            else:
                continue
            loc = ("hosts", name, key)
            problems.append(f"{filename}:{lookup_line(loc, lines)}: {dotted(loc)}: {problem}")
    return sorted(dict.fromkeys(problems), key=_line_of)


def _line_of(problem: str) -> int:
    match = re.match(r"^[^:]*:(\d+):", problem)
    return int(match.group(1)) if match else 0


class _NodeLoader(yaml.SafeLoader):
    pass


def _compose(text: str, filename: str) -> tuple[Any, dict[Path_, int]]:
    try:
        loader = _NodeLoader(text)
    except yaml.reader.ReaderError as exc:
        raise ConfigError(_reader_problem(exc, text, filename)) from None
    try:
        node = loader.get_single_node()
        lines: dict[Path_, int] = {}
        if node is not None:
            _record_lines(node, (), lines, filename)
            return loader.construct_document(node), lines
        return None, lines
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = mark.line + 1 if mark else 1
        what = exc.problem or exc.context or "invalid YAML"
        raise ConfigError(f"{filename}:{line}: YAML syntax error: {what}") from None
    except yaml.reader.ReaderError as exc:
        raise ConfigError(_reader_problem(exc, text, filename)) from None
    except yaml.YAMLError as exc:
        raise ConfigError(f"{filename}:1: YAML syntax error: {exc}") from None
    finally:
        loader.dispose()


def _reader_problem(exc: yaml.reader.ReaderError, text: str, filename: str) -> str:
    line = text.count("\n", 0, max(0, exc.position)) + 1
    column = exc.position - text.rfind("\n", 0, exc.position)
    return (
        f"{filename}:{line}: YAML syntax error: character {exc.character!r} is not allowed "
        f"in YAML (column {column})"
    )


def _record_lines(node: yaml.Node, path: Path_, lines: dict[Path_, int], filename: str) -> None:
    lines.setdefault(path, node.start_mark.line + 1)
    if isinstance(node, yaml.MappingNode):
        seen: dict[Any, int] = {}
        for key_node, value_node in node.value:
            if (
                not isinstance(key_node, yaml.ScalarNode)
                or key_node.tag == "tag:yaml.org,2002:merge"
            ):
                continue
            key, line = key_node.value, key_node.start_mark.line + 1
            if key in seen:
                where = dotted(path + (key,))
                raise ConfigError(
                    f"{filename}:{line}: {where}: duplicate key (first defined on line {seen[key]})"
                )
            seen[key] = line
            lines[path + (key,)] = line
            _record_lines(value_node, path + (key,), lines, filename)
    elif isinstance(node, yaml.SequenceNode):
        for index, item in enumerate(node.value):
            lines[path + (index,)] = item.start_mark.line + 1
            _record_lines(item, path + (index,), lines, filename)


def _merge_defaults(data: dict) -> dict:
    defaults = data.get("defaults")
    hosts = data.get("hosts")
    if not isinstance(defaults, dict) or not isinstance(hosts, dict):
        return data
    merged_hosts = {
        name: ({**defaults, **host} if isinstance(host, dict) else host)
        for name, host in hosts.items()
    }
    return {**data, "hosts": merged_hosts}


def _cross_check(model: HostsFile, lines: dict[Path_, int], filename: str) -> list[str]:
    problems: list[str] = []

    def add(loc: Path_, message: str) -> None:
        problems.append(f"{filename}:{lookup_line(loc, lines)}: {dotted(loc)}: {message}")

    for name, host in model.hosts.items():
        if not NAME_RE.match(name) or ":" in name:
            add(("hosts", name), "host names may use letters, digits, '.', '_' and '-' only")
        _check_jump(model, name, host, add)
        seen_ports: dict[int, int] = {}
        for index, server in enumerate(host.servers):
            loc = ("hosts", name, "servers", index)
            if server.port in seen_ports:
                add(
                    loc + ("port",),
                    f"port {server.port} is already used by "
                    f"servers[{seen_ports[server.port]}] on this host",
                )
            seen_ports.setdefault(server.port, index)
            if server.profile not in model.profiles:
                known = ", ".join(model.profiles) or "none defined"
                close = difflib.get_close_matches(server.profile, list(model.profiles), n=1)
                hint = f"did you mean '{close[0]}'? " if close else ""
                add(
                    loc + ("profile",),
                    f"unknown profile {server.profile!r} ({hint}profiles: {known})",
                )
            else:
                port_flag = flag(model.profiles[server.profile].args, "--port")
                if port_flag is not None and port_flag != str(server.port):
                    add(
                        loc + ("port",),
                        f"profile {server.profile!r} sets --port {port_flag}, "
                        f"which disagrees with this server's port {server.port}",
                    )
    _check_jump_cycles(model, add)
    check_routers(model, add)
    check_containers(model, add)
    return sorted(dict.fromkeys(problems), key=_line_of)


def _check_jump(model: HostsFile, name: str, host: Host, add) -> None:
    jump = host.jump
    if jump is None or jump in model.hosts:
        if jump == name:
            add(("hosts", name, "jump"), "a host cannot be its own jump host")
        return
    if (
        not re.fullmatch(r"(?:[^@\s]+@)?[A-Za-z0-9_.\-\[\]:]+", jump)
        or "@" not in jump
        and ":" not in jump
        and "." not in jump
    ):
        known = ", ".join(model.hosts)
        add(
            ("hosts", name, "jump"),
            f"expected another host's name ({known}) or user@host:port, got {jump!r}",
        )


def _check_jump_cycles(model: HostsFile, add) -> None:
    for name in model.hosts:
        seen, current = [name], model.hosts[name].jump
        while current in model.hosts:
            if current in seen:
                add(
                    ("hosts", name, "jump"),
                    f"jump hosts form a loop: {' -> '.join(seen + [current])}",
                )
                break
            seen.append(current)
            current = model.hosts[current].jump
