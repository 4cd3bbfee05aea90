"""pydantic's validation errors in words, each at the line of hosts.yaml it is about:
``hosts.yaml:14: hosts.ct129.servers[0].port: expected an integer 1-65535, got 'abc'``."""

from __future__ import annotations

import difflib
import types
import typing
from typing import Annotated, Any

from pydantic import BaseModel, ValidationError

from sglconsole.config.schema import NAME_RE, HostsFile

Path_ = tuple  # a location inside the document: ("hosts", "ct129", "servers", 0, "port")


def dotted(path: Path_) -> str:
    out = ""
    for part in path:
        if isinstance(part, int):
            out += f"[{part}]"
        elif NAME_RE.match(str(part)) and "." not in str(part):
            out += f".{part}" if out else str(part)
        else:
            out += f'["{part}"]' if out else f'"{part}"'
    return out or "(top level)"


def lookup_line(loc: Path_, lines: dict[Path_, int]) -> int:
    for end in range(len(loc), -1, -1):
        prefix = loc[:end]
        if prefix in lines:
            return lines[prefix]
        # a host field that came from `defaults:` lives on the defaults' line
        if len(prefix) >= 3 and prefix[0] == "hosts" and ("defaults",) + prefix[2:] in lines:
            return lines[("defaults",) + prefix[2:]]
    return 1


def validation_problems(
    exc: ValidationError, lines: dict[Path_, int], filename: str, data: Any
) -> list[str]:
    out = []
    for err in exc.errors(include_url=False):
        loc = _user_loc(err["loc"], data)
        if _from_defaults(loc, lines):
            continue  # reported once, at defaults.<key>
        out.append(f"{filename}:{lookup_line(loc, lines)}: {dotted(loc)}: {_describe(err, loc)}")
    return list(dict.fromkeys(out))


def _from_defaults(loc: Path_, lines: dict[Path_, int]) -> bool:
    return (
        len(loc) >= 3
        and loc[0] == "hosts"
        and loc[:3] not in lines
        and ("defaults", loc[2]) in lines
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
    bounds = {
        "greater_than": ">",
        "greater_than_equal": ">=",
        "less_than": "<",
        "less_than_equal": "<=",
    }
    if kind in bounds:
        return f"expected a value {bounds[kind]} {next(iter(ctx.values()), '?')}, got {value!r}"
    return f"{err['msg'][:1].lower()}{err['msg'][1:]}, got {value!r}"


def _unknown_key_message(loc: Path_) -> str:
    model = _model_at(loc[:-1]) if loc else None
    if model is None:
        return "unknown key"
    known = [field.alias or name for name, field in model.model_fields.items()]
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


def _unwrap(annotation: Any) -> Any:
    while True:
        origin = typing.get_origin(annotation)
        if origin is Annotated:
            annotation = typing.get_args(annotation)[0]
        elif origin in (typing.Union, types.UnionType):
            args = [arg for arg in typing.get_args(annotation) if arg is not type(None)]
            annotation = args[0] if len(args) == 1 else annotation
            if len(args) != 1:
                return annotation
        else:
            return annotation


def _element_type(annotation: Any) -> Any:
    args = typing.get_args(annotation)
    origin = typing.get_origin(annotation)
    if origin is list and args:
        return args[0]
    if origin is dict and len(args) == 2:
        return args[1]
    return None
