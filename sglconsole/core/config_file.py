"""`--config FILE`: the YAML's keys turned into flags exactly as SGLang merges them (pure).

SGLang's `prepare_server_args` (sglang/srt/server_args.py) runs `ConfigArgumentMerger(parser)
.merge_config_with_args(argv)` when the token `--config` is in argv
(sglang/srt/server_args_config_parser.py, since 0.5.19 sglang/srt/utils/...). Its rule, mirrored:
- only the exact token `--config` triggers it (`--config=FILE` is parsed but never merged); two
  of them, or none followed by a path, are errors; the file must end in .yaml/.yml;
- `yaml.safe_load`; empty is `{}`; anything but a mapping at the root is an error;
- each key, spelled as written, becomes `--KEY`: a boolean of a store_true flag is `--KEY` when
  true and nothing when false, any other boolean `--KEY true|false`; a non-empty list
  `--KEY a b c` (an empty one nothing); a mapping `--KEY <json>` (0.5.14+; before, its str());
  anything else `--KEY str(value)`; a key of an action other than store_true and single-value
  ones (append, count, store_const, BooleanOptional, custom ones) is refused;
- the result is `config_args + argv_before_--config + argv_after_FILE`: argparse keeps the last
  value, so the command line wins over the file, and the file over the defaults.
Which keys name a flag: the flag's dest only, before 0.5.23; from 0.5.23 (`_config_keys`) also
every long spelling of it with `-` as `_`, and a key a supported flag also reads stays usable.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import yaml

CONFIG_FLAG = "--config"
DICT_AS_JSON_SINCE = (0, 5, 14)
ALL_SPELLINGS_SINCE = (0, 5, 23)


class ConfigFileError(ValueError):
    """What SGLang itself would refuse the file or the argv for (the server would not start)."""


@dataclass(frozen=True, slots=True)
class FlagKinds:
    """Which YAML keys are store_true flags and which SGLang refuses, for one release."""

    store_true: frozenset[str]
    unsupported: dict[str, str]
    """key -> the action's kind, for the refusal's message."""
    dict_as_json: bool = True


def _numbers(version: str | None) -> tuple[int, ...]:
    try:
        return tuple(
            int("".join(char for char in part if char.isdigit()))
            for part in (version or "").split(".")[:3]
        )
    except ValueError:
        return ()


def kinds_from_table(actions: Iterable[dict], version: str | None) -> FlagKinds:
    """FlagKinds from a flag table's actions (sglconsole/data/flags: option_strings, dest, kind,
    nargs); `version` None is treated as the newest rule."""
    numbers = _numbers(version)
    newest = not numbers or numbers >= ALL_SPELLINGS_SINCE
    actions = [action for action in actions if action.get("option_strings")]

    def keys(action: dict) -> set[str]:
        found = {action["dest"]}
        if newest:
            found |= {
                option[2:].replace("-", "_")
                for option in action["option_strings"]
                if option.startswith("--")
            }
        return found

    def supported(action: dict) -> bool:
        kind = action.get("kind", "store")
        if kind in ("store_true", "store"):
            return True
        return newest and action.get("nargs") is None and not kind.startswith(("count", "help"))

    store_true = frozenset(
        key for action in actions if action.get("kind") == "store_true" for key in keys(action)
    )
    supported_keys = {key for action in actions if supported(action) for key in keys(action)}
    unsupported = {
        key: _class_name(str(action.get("kind")))
        for action in actions
        if not supported(action)
        and not {CONFIG_FLAG, "--help", "-h"} & set(action["option_strings"])
        for key in keys(action)
        if not newest or key not in supported_keys
    }
    return FlagKinds(store_true, unsupported, not numbers or numbers >= DICT_AS_JSON_SINCE)


ACTION_CLASSES = {
    "store_true": "_StoreTrueAction",
    "store_false": "_StoreFalseAction",
    "store_const": "_StoreConstAction",
    "append": "_AppendAction",
    "count": "_CountAction",
    "boolean_optional": "BooleanOptionalAction",
}


def _class_name(kind: str) -> str:
    """The argparse class SGLang's message names, from a flag table's kind."""
    return ACTION_CLASSES.get(kind, kind.removeprefix("custom:"))


def config_path(args: Iterable[str]) -> str | None:
    """The FILE of `--config FILE` (None: no merge happens); ConfigFileError as SGLang's."""
    args = list(args)
    found = [index for index, arg in enumerate(args) if arg == CONFIG_FLAG]
    if len(found) > 1:
        raise ConfigFileError("Multiple config files specified! Only one allowed.")
    if not found:
        return None
    if found[0] == len(args) - 1:
        raise ConfigFileError("No config file specified after --config flag!")
    path = args[found[0] + 1]
    suffix = os.path.splitext(path)[1]
    if suffix.lower() not in (".yaml", ".yml"):
        raise ConfigFileError(f"Config file must be YAML format, got: {suffix}")
    return path


def read_yaml(text: str) -> dict[str, Any]:
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise ConfigFileError(f"not valid YAML: {str(exc).splitlines()[0]}") from None
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise ConfigFileError("Config file must contain a dictionary at root level")
    return data


def config_args(data: dict[str, Any], kinds: FlagKinds) -> list[str]:
    """`_convert_config_to_args`: the file's keys as flags, in the file's order."""
    args: list[str] = []
    for key, value in data.items():
        key = str(key)
        norm = key.replace("-", "_")
        if norm in kinds.unsupported:
            raise ConfigFileError(
                f"Unsupported config option '{norm}' with action '{kinds.unsupported[norm]}'"
            )
        if isinstance(value, bool):
            if norm in kinds.store_true:
                args += [f"--{key}"] if value else []
            else:
                args += [f"--{key}", str(value).lower()]
        elif isinstance(value, list):
            args += [f"--{key}", *(str(item) for item in value)] if value else []
        elif isinstance(value, dict) and kinds.dict_as_json:
            args += [f"--{key}", json.dumps(value)]
        else:
            args += [f"--{key}", str(value)]
    return args


def merge(args: Iterable[str], from_file: list[str]) -> list[str]:
    """`merge_config_with_args`: the file's flags first, then the command line without
    `--config FILE` (so the command line wins)."""
    args = list(args)
    index = args.index(CONFIG_FLAG)
    return [*from_file, *args[:index], *args[index + 2 :]]


def expand(args: Iterable[str], text: str, kinds: FlagKinds) -> list[str]:
    """The argv SGLang's parser really gets from `args` whose `--config` file holds `text`."""
    return merge(args, config_args(read_yaml(text), kinds))
