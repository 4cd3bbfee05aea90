"""hosts.yaml: discovery, loading and validation.

The file is parsed with PyYAML's composer so every key keeps its line number,
then validated by strict pydantic models (unknown keys are errors). Every
problem becomes one line: ``hosts.yaml:14: hosts.ct129.servers[0].port:
expected an integer 1-65535, got 'abc'``.
"""

from __future__ import annotations

import difflib
import os
import re
import shlex
import types
import typing
from pathlib import Path
from typing import Annotated, Any

import yaml
from packaging.specifiers import InvalidSpecifier, SpecifierSet
from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, ValidationError

from sglconsole.errors import ConfigError

CONFIG_ENV = "SGLCONSOLE_CONFIG"
NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]*$")


# ---------------------------------------------------------------- field types


def _port(value: Any) -> int:
    ok = isinstance(value, int) and not isinstance(value, bool) and 1 <= value <= 65535
    if not ok and isinstance(value, str) and value.strip().isdigit():
        value, ok = int(value), 1 <= int(value) <= 65535
    if not ok:
        raise ValueError(f"expected an integer 1-65535, got {value!r}")
    return value


def _argv(value: Any) -> list[str]:
    """A command line given as a list, or as one string split like a shell does."""
    if isinstance(value, str):
        try:
            return shlex.split(value)
        except ValueError as exc:
            raise ValueError(f"cannot split {value!r} like a shell: {exc}") from None
    if isinstance(value, list) and all(isinstance(v, (str, int, float)) and not isinstance(v, bool) for v in value):
        return [str(v) for v in value]
    raise ValueError(f"expected a list of strings or one command-line string, got {value!r}")


def _env_value(value: Any) -> str:
    # YAML turns `1` into an int and `yes` into True; numbers are safe to stringify,
    # booleans are ambiguous (true/True/1?) so we make the user spell them out.
    if isinstance(value, bool):
        raise ValueError(f"expected a string, got {value!r} (quote it, e.g. \"1\" or \"true\")")
    if isinstance(value, (int, float, str)):
        return str(value)
    raise ValueError(f"expected a string, got {value!r}")


def _specifier(value: Any) -> str:
    try:
        SpecifierSet(str(value))
    except InvalidSpecifier:
        raise ValueError(f"expected a version specifier such as '>=0.5.10', got {value!r}") from None
    return str(value)


def _launcher(value: Any) -> str:
    if value in ("nohup", "systemd-run") or (isinstance(value, str) and re.fullmatch(r"systemd:[\w@.:-]+", value)):
        return value
    raise ValueError(f"expected 'nohup', 'systemd-run' or 'systemd:UNIT', got {value!r}")


def _known_hosts(value: Any) -> str:
    if isinstance(value, str) and value:
        return value
    raise ValueError(f"expected a path to a known_hosts file or 'none', got {value!r}")


Port = Annotated[int, BeforeValidator(_port)]
Argv = Annotated[list[str], BeforeValidator(_argv)]
EnvValue = Annotated[str, BeforeValidator(_env_value)]
Specifier = Annotated[str, BeforeValidator(_specifier)]
Launcher = Annotated[str, BeforeValidator(_launcher)]
KnownHosts = Annotated[str, BeforeValidator(_known_hosts)]


class Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


# --------------------------------------------------------------------- models


class BaselineLevel(Model):
    concurrency: int = Field(ge=1)
    gen_throughput: float = Field(gt=0)
    accept_len: float | None = None
    ttft_p50_ms: float | None = None


class Baseline(Model):
    gen_throughput: float | None = Field(default=None, gt=0)
    """Decode tok/s (SGLang's `gen throughput`) this profile reaches when proven."""
    accept_len: float | None = Field(default=None, gt=0)
    slow_fraction: float = Field(default=0.75, gt=0, le=1)
    """SLOW when the live median falls under this fraction of the baseline."""
    concurrency: int | None = None
    levels: list[BaselineLevel] = []
    measured_at: str | None = None
    sglang_version: str | None = None
    gpu_model: str | None = None
    gpu_count: int | None = None
    input_len: int | None = None
    output_len: int | None = None


class Probe(Model):
    prompt: str = "What is 2+2? Answer with one number."
    max_tokens: int = Field(default=16, ge=1)
    expect: str | None = "4"


class Profile(Model):
    python: str = "python3"
    """Interpreter on the host that has SGLang installed."""
    args: Argv
    """Arguments after `python -m sglang.launch_server`."""
    env: dict[str, EnvValue] = {}
    workdir: str | None = None
    requires_sglang: Specifier | None = None
    baseline: Baseline | None = None
    probe: Probe = Probe()
    startup_timeout: float = Field(default=900, gt=0)
    description: str | None = None


class Server(Model):
    port: Port
    profile: str
    gpus: list[Annotated[int, Field(ge=0)]] = []
    log: str | None = None
    """Path of the server's log on the host."""
    launcher: Launcher = "nohup"
    http_address: str = "127.0.0.1"
    """Where the server listens as seen from the SSH host (the container's address for pct)."""

    @property
    def systemd_unit(self) -> str | None:
        return self.launcher.split(":", 1)[1] if self.launcher.startswith("systemd:") else None


class HostFields(Model):
    address: str | None = None
    port: Port = 22
    user: str | None = None
    jump: str | None = None
    """Another host's NAME, or user@host:port."""
    exec_prefix: Argv = []
    """argv every remote command is wrapped in, e.g. [pct, exec, "129", "--"]."""
    identity_file: str | None = None
    known_hosts: KnownHosts | None = None
    """known_hosts file to verify the host key against ('none' disables checking: warned)."""
    python: str = "python3"
    """Interpreter used for the console's read-only process/log watcher on the host."""
    connect_timeout: float = Field(default=10, gt=0)
    keepalive_interval: float = Field(default=5, gt=0)
    keepalive_count_max: int = Field(default=3, ge=1)
    gpu_interval_ms: int = Field(default=1000, ge=100)
    lock_dir: str = "/tmp"
    """Where the per-server action locks live on the host (shared by every console)."""


class Host(HostFields):
    address: str
    servers: list[Server] = []


class HostsFile(Model):
    hosts: dict[str, Host]
    profiles: dict[str, Profile] = {}
    defaults: HostFields | None = None
    alert_command: Argv | None = None


class Config:
    """A validated hosts.yaml plus where it came from."""

    def __init__(self, model: HostsFile, path: Path | None):
        self.model = model
        self.path = path

    @property
    def hosts(self) -> dict[str, Host]:
        return self.model.hosts

    @property
    def profiles(self) -> dict[str, Profile]:
        return self.model.profiles

    def host(self, name: str) -> Host:
        try:
            return self.model.hosts[name]
        except KeyError:
            known = ", ".join(self.model.hosts) or "none"
            raise ConfigError(f"unknown host {name!r} (hosts: {known})") from None

    def server(self, host: str, port: int) -> Server:
        for server in self.host(host).servers:
            if server.port == port:
                return server
        ports = ", ".join(str(s.port) for s in self.host(host).servers) or "none"
        raise ConfigError(f"{host} has no server on port {port} (configured: {ports})")


# ------------------------------------------------------------------ discovery


def discover(cli_path: str | os.PathLike | None = None) -> Path:
    """-c PATH, then $SGLCONSOLE_CONFIG, ./hosts.yaml, ~/.config/sglconsole/hosts.yaml."""
    if cli_path:
        return Path(cli_path)
    if os.environ.get(CONFIG_ENV):
        return Path(os.environ[CONFIG_ENV])
    candidates = [Path("hosts.yaml"), Path.home() / ".config" / "sglconsole" / "hosts.yaml"]
    for candidate in candidates:
        if candidate.is_file():
            return candidate
    tried = ", ".join(str(c) for c in candidates)
    raise ConfigError(f"no hosts.yaml found (give -c PATH or set ${CONFIG_ENV}; looked in {tried})")


def load(cli_path: str | os.PathLike | None = None) -> Config:
    path = discover(cli_path)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ConfigError(f"{path}: no such file") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{path}: cannot read: {exc}") from None
    return Config(parse(text, str(path)), path)


# -------------------------------------------------------------------- parsing


Path_ = tuple  # a location inside the document: ("hosts", "ct129", "servers", 0, "port")


def parse(text: str, filename: str = "hosts.yaml") -> HostsFile:
    data, lines = _compose(text, filename)
    if data is None:
        raise ConfigError(f"{filename}:1: the file is empty (expected a 'hosts:' mapping)")
    if not isinstance(data, dict):
        raise ConfigError(f"{filename}:1: expected a mapping with 'hosts:' at the top, got {type(data).__name__}")
    merged = _merge_defaults(data)
    try:
        model = HostsFile.model_validate(merged)
    except ValidationError as exc:
        raise ConfigError(sorted(_problems(exc, lines, filename, merged), key=_line_of)) from None
    problems = _cross_check(model, lines, filename)
    if problems:
        raise ConfigError(problems)
    return model


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
    return f"{filename}:{line}: YAML syntax error: character {exc.character!r} is not allowed in YAML (column {exc.position - text.rfind(chr(10), 0, exc.position)})"


def _record_lines(node: yaml.Node, path: Path_, lines: dict[Path_, int], filename: str) -> None:
    lines.setdefault(path, node.start_mark.line + 1)
    if isinstance(node, yaml.MappingNode):
        seen: dict[Any, int] = {}
        for key_node, value_node in node.value:
            if not isinstance(key_node, yaml.ScalarNode) or key_node.tag == "tag:yaml.org,2002:merge":
                continue
            key, line = key_node.value, key_node.start_mark.line + 1
            if key in seen:
                where = _dotted(path + (key,))
                raise ConfigError(f"{filename}:{line}: {where}: duplicate key (first defined on line {seen[key]})")
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
        name: ({**defaults, **host} if isinstance(host, dict) else host) for name, host in hosts.items()
    }
    return {**data, "hosts": merged_hosts}


def _dotted(path: Path_) -> str:
    out = ""
    for part in path:
        if isinstance(part, int):
            out += f"[{part}]"
        elif NAME_RE.match(str(part)) and "." not in str(part):
            out += f".{part}" if out else str(part)
        else:
            out += f'["{part}"]' if out else f'"{part}"'
    return out or "(top level)"


def _lookup_line(loc: Path_, lines: dict[Path_, int]) -> int:
    for end in range(len(loc), -1, -1):
        prefix = loc[:end]
        if prefix in lines:
            return lines[prefix]
        # a host field that came from `defaults:` lives on the defaults' line
        if len(prefix) >= 3 and prefix[0] == "hosts" and ("defaults",) + prefix[2:] in lines:
            return lines[("defaults",) + prefix[2:]]
    return 1


def _problems(exc: ValidationError, lines: dict[Path_, int], filename: str, data: Any) -> list[str]:
    out = []
    for err in exc.errors(include_url=False):
        loc = _user_loc(err["loc"], data)
        if _from_defaults(loc, lines):
            continue  # reported once, at defaults.<key>
        out.append(f"{filename}:{_lookup_line(loc, lines)}: {_dotted(loc)}: {_describe(err, loc)}")
    return list(dict.fromkeys(out))


def _from_defaults(loc: Path_, lines: dict[Path_, int]) -> bool:
    return (
        len(loc) >= 3 and loc[0] == "hosts" and loc[:3] not in lines and ("defaults", loc[2]) in lines
    )


def _user_loc(loc: tuple, data: Any) -> Path_:
    """The error's location with pydantic's own steps dropped; a step that is a real key in the
    document is kept even when it looks like one of pydantic's (a key named '[' or 'int')."""
    kept: list = []
    current = data
    for part in loc:
        in_dict = isinstance(current, dict) and part in current
        in_list = isinstance(current, list) and isinstance(part, int) and 0 <= part < len(current)
        if in_dict or in_list:
            kept.append(part)
            current = current[part]
        elif not _is_internal_loc(part):
            kept.append(part)
            current = None
    return tuple(kept)


def _is_internal_loc(part: Any) -> bool:
    # pydantic adds validator/union branch names such as 'function-before[...]' to locations
    return isinstance(part, str) and ("[" in part or part in {"str", "int", "float", "list"})


def _describe(err: dict, loc: Path_) -> str:
    kind, value = err["type"], err.get("input")
    if kind == "value_error":
        return str(err["msg"]).removeprefix("Value error, ")
    if kind == "missing":
        return "required field is missing"
    if kind == "extra_forbidden":
        return _unknown_key_message(loc)
    simple = {
        "int_parsing": "expected an integer",
        "int_type": "expected an integer",
        "int_from_float": "expected an integer",
        "float_parsing": "expected a number",
        "float_type": "expected a number",
        "string_type": "expected a string",
        "bool_type": "expected true or false",
        "bool_parsing": "expected true or false",
        "list_type": "expected a list",
        "dict_type": "expected a mapping",
        "model_type": "expected a mapping",
        "model_attributes_type": "expected a mapping",
    }
    if kind in simple:
        return f"{simple[kind]}, got {value!r}"
    ctx = err.get("ctx") or {}
    bounds = {"greater_than": ">", "greater_than_equal": ">=", "less_than": "<", "less_than_equal": "<="}
    if kind in bounds:
        return f"expected a value {bounds[kind]} {next(iter(ctx.values()), '?')}, got {value!r}"
    return f"{err['msg'][:1].lower()}{err['msg'][1:]}, got {value!r}"


def _unknown_key_message(loc: Path_) -> str:
    model = _model_at(loc[:-1]) if loc else None
    if model is None:
        return "unknown key"
    known = list(model.model_fields)
    close = difflib.get_close_matches(str(loc[-1]), known, n=1)
    hint = f"did you mean '{close[0]}'? " if close else ""
    return f"unknown key ({hint}expected one of: {', '.join(known)})"


def _model_at(loc: Path_) -> type[BaseModel] | None:
    """Which model validates the mapping at `loc` (for listing its valid keys)."""
    current: Any = HostsFile
    for part in loc:
        if isinstance(current, type) and issubclass(current, BaseModel):
            field = current.model_fields.get(str(part))
            if field is None:
                return None
            current = field.annotation
        else:
            current = _element_type(current)
        current = _unwrap(current)
    current = _unwrap(current)
    return current if isinstance(current, type) and issubclass(current, BaseModel) else None


def _unwrap(tp: Any) -> Any:
    while True:
        origin = typing.get_origin(tp)
        if origin is Annotated:
            tp = typing.get_args(tp)[0]
        elif origin in (typing.Union, types.UnionType):
            args = [a for a in typing.get_args(tp) if a is not type(None)]
            tp = args[0] if len(args) == 1 else tp
            if len(args) != 1:
                return tp
        else:
            return tp


def _element_type(tp: Any) -> Any:
    args = typing.get_args(tp)
    origin = typing.get_origin(tp)
    if origin is list and args:
        return args[0]
    if origin is dict and len(args) == 2:
        return args[1]
    return None


def _cross_check(model: HostsFile, lines: dict[Path_, int], filename: str) -> list[str]:
    problems: list[str] = []

    def add(loc: Path_, message: str) -> None:
        problems.append(f"{filename}:{_lookup_line(loc, lines)}: {_dotted(loc)}: {message}")

    for name, host in model.hosts.items():
        if not NAME_RE.match(name) or ":" in name:
            add(("hosts", name), "host names may use letters, digits, '.', '_' and '-' only")
        _check_jump(model, name, host, add)
        seen_ports: dict[int, int] = {}
        for index, server in enumerate(host.servers):
            loc = ("hosts", name, "servers", index)
            if server.port in seen_ports:
                add(loc + ("port",), f"port {server.port} is already used by servers[{seen_ports[server.port]}] on this host")
            seen_ports.setdefault(server.port, index)
            if server.profile not in model.profiles:
                known = ", ".join(model.profiles) or "none defined"
                close = difflib.get_close_matches(server.profile, list(model.profiles), n=1)
                hint = f"did you mean '{close[0]}'? " if close else ""
                add(loc + ("profile",), f"unknown profile {server.profile!r} ({hint}profiles: {known})")
            else:
                port_flag = _flag_value(model.profiles[server.profile].args, "--port")
                if port_flag is not None and port_flag != str(server.port):
                    add(loc + ("port",), f"profile {server.profile!r} sets --port {port_flag}, which disagrees with this server's port {server.port}")
    _check_jump_cycles(model, add)
    return sorted(dict.fromkeys(problems), key=_line_of)


def _check_jump(model: HostsFile, name: str, host: Host, add) -> None:
    jump = host.jump
    if jump is None or jump in model.hosts:
        if jump == name:
            add(("hosts", name, "jump"), "a host cannot be its own jump host")
        return
    if not re.fullmatch(r"(?:[^@\s]+@)?[A-Za-z0-9_.\-\[\]:]+", jump) or "@" not in jump and ":" not in jump and "." not in jump:
        known = ", ".join(model.hosts)
        add(("hosts", name, "jump"), f"expected another host's name ({known}) or user@host:port, got {jump!r}")


def _check_jump_cycles(model: HostsFile, add) -> None:
    for name in model.hosts:
        seen, current = [name], model.hosts[name].jump
        while current in model.hosts:
            if current in seen:
                add(("hosts", name, "jump"), f"jump hosts form a loop: {' -> '.join(seen + [current])}")
                break
            seen.append(current)
            current = model.hosts[current].jump


def _flag_value(args: list[str], flag: str) -> str | None:
    for index, arg in enumerate(args):
        if arg == flag and index + 1 < len(args):
            return args[index + 1]
        if arg.startswith(flag + "="):
            return arg.split("=", 1)[1]
    return None

