"""The field types of hosts.yaml's models (ports, argv, env values, launchers, ...) and their
base Model: strict (extra keys are errors), frozen, documented by the docstrings under fields."""

from __future__ import annotations

import re
import shlex
from typing import Annotated, Any, Literal

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field

# ---------------------------------------------------------------- field types


def _port(value: Any) -> int:
    valid = isinstance(value, int) and not isinstance(value, bool) and 1 <= value <= 65535
    if not valid and isinstance(value, str) and value.strip().isdigit():
        value, valid = int(value), 1 <= int(value) <= 65535
    if not valid:
        raise ValueError(f"expected an integer 1-65535, got {value!r}")
    return value


def _argv(value: Any) -> list[str]:
    """A command line given as a list, or as one string split like a shell does."""
    if isinstance(value, str):
        try:
            return shlex.split(value)
        except ValueError as exc:
            raise ValueError(f"cannot split {value!r} like a shell: {exc}") from None
    if isinstance(value, list) and all(
        isinstance(item, (str, int, float)) and not isinstance(item, bool) for item in value
    ):
        return [str(item) for item in value]
    raise ValueError(f"expected a list of strings or one command-line string, got {value!r}")


def _env_value(value: Any) -> str:
    # YAML turns `1` into an int and `yes` into True; numbers are safe to stringify,
    # booleans are ambiguous (true/True/1?) so we make the user spell them out.
    if isinstance(value, bool):
        raise ValueError(f'expected a string, got {value!r} (quote it, e.g. "1" or "true")')
    if isinstance(value, (int, float, str)):
        return str(value)
    raise ValueError(f"expected a string, got {value!r}")


def _specifier(value: Any) -> str:
    # packaging is imported by the first specifier a hosts.yaml has (~10 ms of every start)
    from packaging.specifiers import InvalidSpecifier, SpecifierSet

    try:
        SpecifierSet(str(value))
    except InvalidSpecifier:
        raise ValueError(
            f"expected a version specifier such as '>=0.5.10', got {value!r}"
        ) from None
    return str(value)


def _launcher(value: Any) -> str:
    if value in ("nohup", "systemd-run") or (
        isinstance(value, str) and re.fullmatch(r"systemd:[\w@.:-]+", value)
    ):
        return value
    raise ValueError(f"expected 'nohup', 'systemd-run' or 'systemd:UNIT', got {value!r}")


def _known_hosts(value: Any) -> str:
    if isinstance(value, str) and value:
        return value
    raise ValueError(f"expected a path to a known_hosts file or 'none', got {value!r}")


def _http_url(value: Any) -> str:
    if isinstance(value, str) and re.fullmatch(r"https?://[^/\s]+(/\S*)?", value):
        return value.rstrip("/")
    raise ValueError(f"expected an http(s) URL such as http://prometheus:9090, got {value!r}")


# json_schema_input_type: what the published JSON Schema (`sglconsole schema hosts`) accepts,
# as the validators do; it changes nothing in validation
Port = Annotated[
    int,
    BeforeValidator(
        _port,
        json_schema_input_type=Annotated[int, Field(ge=1, le=65535)]
        | Annotated[str, Field(pattern=r"^\s*[0-9]+\s*$")],
    ),
]
Argv = Annotated[
    list[str], BeforeValidator(_argv, json_schema_input_type=list[str | int | float] | str)
]
EnvValue = Annotated[str, BeforeValidator(_env_value, json_schema_input_type=str | int | float)]
Specifier = Annotated[str, BeforeValidator(_specifier, json_schema_input_type=str)]
Launcher = Annotated[
    str,
    BeforeValidator(
        _launcher,
        json_schema_input_type=Literal["nohup", "systemd-run"]
        | Annotated[str, Field(pattern=r"^systemd:[\w@.:-]+$")],
    ),
]
KnownHosts = Annotated[
    str, BeforeValidator(_known_hosts, json_schema_input_type=Annotated[str, Field(min_length=1)])
]


class Model(BaseModel):
    # the docstrings under the fields are their descriptions in the JSON Schema: read only when
    # it is generated (config.json_schema; reading them at every import cost each start ~15 ms)
    model_config = ConfigDict(extra="forbid", frozen=True)
