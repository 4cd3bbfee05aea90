"""SGLang's server parser rebuilt from a flag table (sglconsole/data/flags/sglang-X.json).

The tables are generated from the real ``ServerArgs.add_cli_args``
(tools/gen_flag_table.py). `argdiff` uses them when SGLang is not importable
here: `parse` answers what the host-side snippet (remote.sglang_args.SNIPPET)
answers, from the table instead of the real parser. The simulator has its own
reader of the same tables (the console never imports the simulator). Pure: the
table comes in as a dict.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
from typing import Any


def version_key(version: str) -> tuple:
    return tuple(
        int(part) if part.isdigit() else 0 for part in version.replace("post", ".").split(".")
    )


def _default(value: object) -> object:
    if isinstance(value, dict) and set(value) == {"repr"}:
        return value["repr"]
    return value


def _type(name: str | None):
    if name is None:
        return None
    return {"int": int, "float": float, "json": json.loads}.get(name, str)


class _Refuse(argparse.Action):
    """A flag SGLang keeps only to reject with a message (removed arguments)."""

    def __call__(self, parser, namespace, values, option_string=None):
        parser.error(self.help or f"{option_string} is no longer supported")


class _Deprecated(argparse.Action):
    """A deprecated flag: it still stores its value (SGLang also warns)."""

    def __init__(self, *args, stores=None, **kwargs):
        self.stores = stores
        super().__init__(*args, **kwargs)

    def __call__(self, parser, namespace, values, option_string=None):
        setattr(namespace, self.dest, self.stores if self.stores is not None else values)


def _add(parser: argparse.ArgumentParser, action: dict) -> None:
    options = action["option_strings"]
    kind = action.get("kind", "store")
    if not options or kind == "help" or "-h" in options:
        return
    kwargs: dict = {"dest": action["dest"]}
    default = _default(action.get("default"))
    if kind == "boolean_optional":
        positive = [option for option in options if not option.startswith("--no-")]
        parser.add_argument(
            *positive, action=argparse.BooleanOptionalAction, default=default, **kwargs
        )
        return
    if kind.startswith("custom:Deprecated"):
        uses = (action.get("action_info") or {}).get("on_use") or [{}]
        if action.get("choices") is not None:
            kwargs["choices"] = action["choices"]
        parser.add_argument(
            *options,
            action=_Deprecated,
            nargs=action.get("nargs"),
            default=default,
            stores=uses[0].get("stores", action.get("const")),
            **kwargs,
        )
        return
    if kind in ("store_true", "store_false", "count"):
        parser.add_argument(*options, action=kind, default=default, **kwargs)
        return
    if kind == "store_const":
        parser.add_argument(
            *options, action="store_const", const=action.get("const"), default=default, **kwargs
        )
        return
    if kind.startswith("custom:") and action.get("refuses"):
        parser.add_argument(*options, action=_Refuse, nargs="?", help=action["refuses"], **kwargs)
        return
    if kind == "append":
        kwargs["action"] = "append"
    nargs = action.get("nargs")
    if nargs is not None:
        kwargs["nargs"] = nargs
        if nargs == "?":
            kwargs["const"] = action.get("const")
    if action.get("choices") is not None:
        kwargs["choices"] = action["choices"]
    kind_type = _type(action.get("type"))
    if kind_type is not None:
        kwargs["type"] = kind_type
    if action.get("required"):
        kwargs["required"] = True
    parser.add_argument(*options, default=default, **kwargs)


def build_parser(table: dict) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog=table.get("prog_usage_name") or "launch_server.py")
    for action in table["actions"]:
        _add(parser, action)
    return parser


def _jsonable(value: Any) -> Any:
    try:
        json.dumps(value)
        return value
    except (TypeError, ValueError):
        return {"repr": repr(value)}


def parse(table: dict, argvs: dict[str, list[str]]) -> dict:
    """What remote.sglang_args.SNIPPET prints (without its marker), judged by the table."""
    actions = {
        action.dest: {
            "flags": list(action.option_strings),
            "default": _jsonable(action.default),
            "takes_value": action.nargs != 0,
        }
        for action in build_parser(table)._actions
        if action.option_strings and action.dest != "help"
    }
    results = {}
    for key, argv in argvs.items():
        err = io.StringIO()
        try:
            with contextlib.redirect_stderr(err):
                values = vars(build_parser(table).parse_args(argv))
                quiet = build_parser(table)
                for action in quiet._actions:
                    action.default = argparse.SUPPRESS
                given = sorted(vars(quiet.parse_args(argv)))
            results[key] = {
                "values": {dest: _jsonable(value) for dest, value in values.items()},
                "given": given,
                "error": None,
            }
        except SystemExit:
            error = err.getvalue().strip() or "argparse rejected the arguments"
            results[key] = {"values": {}, "given": [], "error": error}
    return {
        "ok": True,
        "version": str(table.get("sglang_version")),
        "python": None,
        "actions": actions,
        "results": results,
    }
