"""The JSON Schema of hosts.yaml, from its pydantic models (`sglconsole schema hosts`).

schemas/hosts.schema.json in the repository is this, checked in for editors: a
`# yaml-language-server: $schema=./schemas/hosts.schema.json` line at the top
of a hosts.yaml gives completion and checking as it is typed. The models stay
the authority: `sglconsole check` also checks what a schema cannot (profiles
named by servers exist, jump hosts, GPUs used twice, ...).
"""

from __future__ import annotations

import functools
import typing
from typing import Any

from pydantic import BaseModel
from pydantic._internal._docs_extraction import extract_docstrings_from_cls

from sglconsole.config.schema import HostsFile
from sglconsole.config.schema_types import Model

DRAFT = "https://json-schema.org/draft/2020-12/schema"


def hosts_schema() -> dict[str, Any]:
    _read_docstrings()
    schema = HostsFile.model_json_schema()
    host = schema["$defs"]["Host"]
    # `defaults:` may give the address (containers behind one Proxmox host): the models see the
    # file after defaults are merged into each host, the schema sees the file as written
    host["required"] = [key for key in host.get("required", []) if key != "address"]
    if not host["required"]:
        del host["required"]
    return {
        "$schema": DRAFT,
        "title": "sglconsole hosts.yaml",
        "description": "The fleet definition of sglconsole: hosts, their SGLang servers, and the"
        " profiles (proven launch configurations) they run.",
        **{key: value for key, value in schema.items() if key != "title"},
    }


@functools.cache
def _read_docstrings() -> None:
    """What pydantic's use_attribute_docstrings does at each model's build, done once here: a
    field's docstring is its description where it has none (an inherited field keeps its
    parent's), then each model is rebuilt after the models it holds."""
    models = _models(Model)
    for model in models:  # parents first
        docs = extract_docstrings_from_cls(model, use_inspect=True)
        own = model.__dict__.get("__annotations__", {})
        for name, field in model.__pydantic_fields__.items():
            if field.description is not None:
                continue
            if name in own:
                field.description = docs.get(name)
            else:
                parent = next(base for base in model.__mro__[1:] if name in _fields(base))
                field.description = _fields(parent)[name].description
    rebuilt: set[type] = set()
    for model in models:
        _rebuild(model, rebuilt)


def _models(root: type[BaseModel]) -> list[type[BaseModel]]:
    found: list[type[BaseModel]] = []
    for child in root.__subclasses__():
        found += [child, *_models(child)]
    return list(dict.fromkeys(found))


def _fields(model: type) -> dict[str, Any]:
    return getattr(model, "__pydantic_fields__", {})


def _rebuild(model: type[BaseModel], rebuilt: set[type]) -> None:
    if model in rebuilt:
        return
    rebuilt.add(model)
    for field in model.__pydantic_fields__.values():
        for held in _held(field.annotation):
            _rebuild(held, rebuilt)
    model.model_rebuild(force=True)


def _held(annotation: Any) -> list[type[BaseModel]]:
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return [annotation]
    return [model for arg in typing.get_args(annotation) for model in _held(arg)]
