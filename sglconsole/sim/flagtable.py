"""SGLang's command-line flags, per version, rebuilt as an argparse parser.

The tables in sglconsole/data/flags/ (shared with the console's `argdiff`, read as
data files: nothing is imported from the console) were generated from the real
``ServerArgs.add_cli_args`` by tools/gen_flag_table.py, so the simulator accepts
exactly the flags a real server of that version accepts, with argparse's own prefix
matching and error texts. Stdlib only: simulated processes import this.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from functools import cache
from pathlib import Path

FLAGS_DIR = Path(__file__).parents[1] / "data" / "flags"


def available_versions() -> list[str]:
    return sorted(
        (path.stem.removeprefix("sglang-") for path in FLAGS_DIR.glob("sglang-*.json")),
        key=_version_key,
    )


def _version_key(version: str) -> tuple:
    return tuple(
        int(part) if part.isdigit() else 0 for part in version.replace("post", ".").split(".")
    )


_RELEASE = re.compile(r"v?(\d+(?:\.\d+)*)(?:\.?post\d+)?")


def pick(version: str, versions: list[str], what: str = "flag table") -> tuple[str, str | None]:
    """Which of `versions` (sorted) describes SGLang `version`, and the line to show about it.

    Its own (``X.postN``: X's); newer than the newest: the newest, with a note; between
    two without one of its own: the newest older one, with a note; older than the oldest
    or not a version: ValueError. The console's reader (config/flag_tables.py) agrees.
    """
    match = _RELEASE.fullmatch(version.strip())
    if not match:
        raise ValueError(f"not an SGLang version: {version!r}")
    release = match[1]
    if release in versions:
        return release, None
    newest = versions[-1]
    if _version_key(release) > _version_key(newest):
        return newest, (
            f"SGLang {version} is newer than the newest {what} ({newest}): judged with {newest}'s"
        )
    older = [known for known in versions if _version_key(known) <= _version_key(release)]
    if not older:
        raise ValueError(
            f"no SGLang {what} for {version} or older: SGLang {version} is older than the"
            f" oldest {what} ({versions[0]}) (have: {', '.join(versions)})"
        )
    return older[-1], f"SGLang {version} has no {what} of its own: judged with {older[-1]}'s"


@cache
def load_table(version: str) -> dict:
    """The table for `version`, chosen by pick()."""
    chosen, _ = pick(version, available_versions())
    return json.loads((FLAGS_DIR / f"sglang-{chosen}.json").read_text())


def note(version: str) -> str | None:
    """The one line to show when `version` is not judged by a table of its own."""
    return pick(version, available_versions())[1]


def _default(value: object) -> object:
    if isinstance(value, dict) and set(value) == {"repr"}:
        return value["repr"]
    return value


def _type(name: str | None):
    if name in (None, "str") or str(name).startswith("custom:"):
        return None if name is None else str
    return {"int": int, "float": float, "json": json.loads}.get(name, str)


class _Refuse(argparse.Action):
    """A flag SGLang keeps only to reject with a message (removed/deprecated arguments)."""

    def __call__(self, parser, namespace, values, option_string=None):
        parser.error(self.help or f"{option_string} is no longer supported")


def add_cli_args(parser: argparse.ArgumentParser, version: str) -> None:
    for action in load_table(version)["actions"]:
        _add(parser, action)


class _Warn(argparse.Action):
    """SGLang's deprecated flags: say so on stderr, then store what the real action stores
    (`mode`: "value" the given value, "const" a fixed one, "nothing" leave the default)."""

    def __init__(self, *args, mode="value", stores=None, messages=(), **kwargs):
        self.mode = mode
        self.stores = stores
        self.messages = messages
        super().__init__(*args, **kwargs)

    def __call__(self, parser, namespace, values, option_string=None):
        for message in self.messages:
            # print_deprecated_warning: logger.warning(f"\033[1;33m{message}\033[0m") before
            # logging is set up, so Python's last-resort handler writes the bare line
            print(f"\x1b[1;33m{message}\x1b[0m", file=sys.stderr)
        if self.mode == "value":
            setattr(namespace, self.dest, values)
        elif self.mode == "const":
            setattr(namespace, self.dest, self.stores)


def _deprecated_mode(action: dict, use: dict) -> str:
    if use.get("stores_nothing"):
        return "nothing"
    if action.get("kind") == "custom:DeprecatedAliasStoreAction":
        return "value"  # an old spelling of a flag: it stores what it is given
    return "const"


def _add(parser: argparse.ArgumentParser, action: dict) -> None:
    options = action["option_strings"]
    kind = action.get("kind", "store")
    if not options or kind == "help" or "-h" in options:
        return
    kwargs: dict = {"dest": action["dest"], "help": action.get("help") or None}
    default = _default(action.get("default"))
    if kind == "boolean_optional":
        positive = [option for option in options if not option.startswith("--no-")]
        parser.add_argument(
            *positive, action=argparse.BooleanOptionalAction, default=default, **kwargs
        )
        return
    if kind.startswith("custom:Deprecated"):
        use = ((action.get("action_info") or {}).get("on_use") or [{}])[0]
        mode = _deprecated_mode(action, use)
        if action.get("choices") is not None:
            kwargs["choices"] = action["choices"]
        kind_type = _type(action.get("type"))
        if mode == "value" and kind_type is not None:
            kwargs["type"] = kind_type
        parser.add_argument(
            *options,
            action=_Warn,
            nargs=action.get("nargs"),
            default=default,
            mode=mode,
            stores=use.get("stores", action.get("const")),
            messages=use.get("messages", ()),
            **kwargs,
        )
        return
    if kind in ("store_true", "store_false"):
        parser.add_argument(*options, action=kind, default=default, **kwargs)
        return
    if kind == "count":
        parser.add_argument(*options, action="count", default=default, **kwargs)
        return
    if kind == "store_const":
        parser.add_argument(
            *options, action="store_const", const=action.get("const"), default=default, **kwargs
        )
        return
    if kind.startswith("custom:") and action.get("refuses"):
        kwargs["help"] = action["refuses"]
        parser.add_argument(*options, action=_Refuse, nargs="?", **kwargs)
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
    if action.get("metavar") is not None:
        kwargs["metavar"] = action["metavar"]
    parser.add_argument(*options, default=default, **kwargs)


def build_parser(version: str, prog: str | None = None) -> argparse.ArgumentParser:
    """The parser `launch_server` uses: SGLang >= 0.5.10 names itself "sglang serve"."""
    table_prog = load_table(version).get("prog_usage_name")
    if table_prog and table_prog != "launch_server.py":
        prog = table_prog
    parser = argparse.ArgumentParser(prog=prog)
    add_cli_args(parser, version)
    return parser


def version_tuple(version: str) -> tuple:
    return _version_key(version)


def defaults(version: str) -> dict[str, object]:
    return {
        action["dest"]: _default(action.get("default"))
        for action in load_table(version)["actions"]
        if action["option_strings"]
    }
