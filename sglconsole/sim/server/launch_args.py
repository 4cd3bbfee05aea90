"""What a simulated server's parser gets: `sglang serve`'s own handling of its argv, and
`--config FILE` merged as `prepare_server_args` merges it.

Mirrors, from SGLang's source (the simulator shares no code with the console):
- sglang/cli/serve.py: `_extract_model_type_override` drops `--model-type X`; from 0.5.16
  `_normalize_positional_model_path` turns `serve MODEL ...` into `--model-path MODEL ...`;
  before, `get_model_path` raises "Error: --model-path is required. ...";
- ConfigArgumentMerger (sglang/srt/[utils/]server_args_config_parser.py), run by
  prepare_server_args when the token `--config` is in argv: the YAML's keys become `--KEY`
  flags (store_true booleans bare or nothing, other booleans `true`/`false`, lists spread,
  mappings as JSON from 0.5.14, the rest str()), placed before the command line, which wins.
Gated on the version table's `serve_positional_model` when the generator writes it, else on
the release number (a hand check, until it does).
"""

from __future__ import annotations

import argparse
import json
import os
import sys

from sglconsole.sim import versiontable
from sglconsole.sim.flagtable import version_tuple

POSITIONAL_SINCE = (0, 5, 16)
DICT_AS_JSON_SINCE = (0, 5, 14)
ALL_SPELLINGS_SINCE = (0, 5, 23)


class LaunchRefused(Exception):
    """What SGLang raises before its parser runs (a traceback, exit status 1)."""

    def report(self) -> int:
        print(f"Traceback (most recent call last):\n{self}", file=sys.stderr, flush=True)
        return 1


def parser_argv(
    argv: list[str] | None, parser: argparse.ArgumentParser, version: str, entry: str
) -> list[str]:
    """The argv the server parser gets (`argv` None: this process's own)."""
    given = list(sys.argv[1:] if argv is None else argv)
    if entry == "serve":
        given = serve_argv(given, version)
    return merge_config(given, parser, version)


def takes_positional(version: str) -> bool:
    known = versiontable.load(version).get("serve_positional_model")
    if known is not None:
        return bool(known)
    return version_tuple(version) >= POSITIONAL_SINCE


def serve_argv(argv: list[str], version: str) -> list[str]:
    out, skip = [], False
    for arg in argv:
        if skip:
            skip = False
        elif arg == "--model-type":
            skip = True
        elif not arg.startswith("--model-type="):
            out.append(arg)
    if out and not out[0].startswith("-"):
        if not takes_positional(version):
            raise LaunchRefused(
                "Exception: Error: --model-path is required. Please provide the path to the model."
            )
        out = ["--model-path", out[0], *out[1:]]
    return out


def _keys(action: argparse.Action, every: bool) -> set[str]:
    keys = {action.dest}
    if every:
        keys |= {
            option[2:].replace("-", "_")
            for option in action.option_strings
            if option.startswith("--")
        }
    return keys


def merge_config(argv: list[str], parser: argparse.ArgumentParser, version: str) -> list[str]:
    if "--config" not in argv:
        return argv
    import yaml  # SGLang's own dependency; only a --config launch needs it

    every = version_tuple(version) >= ALL_SPELLINGS_SINCE
    found = [position for position, arg in enumerate(argv) if arg == "--config"]
    if len(found) > 1:
        raise LaunchRefused("ValueError: Multiple config files specified! Only one allowed.")
    index = found[0]
    if index == len(argv) - 1:
        raise LaunchRefused("ValueError: No config file specified after --config flag!")
    path = argv[index + 1]
    suffix = os.path.splitext(path)[1]
    if suffix.lower() not in (".yaml", ".yml"):
        raise LaunchRefused(f"ValueError: Config file must be YAML format, got: {suffix}")
    if not os.path.exists(path):
        raise LaunchRefused(f"ValueError: Config file not found: {path}")
    with open(path) as file:
        data = yaml.safe_load(file) or {}
    if not isinstance(data, dict):
        raise LaunchRefused("ValueError: Config file must contain a dictionary at root level")
    actions = [action for action in parser._actions if action.option_strings]
    store_true = {
        key
        for action in actions
        if isinstance(action, argparse._StoreTrueAction)
        for key in _keys(action, every)
    }

    def supported(action: argparse.Action) -> bool:
        plain = isinstance(action, (argparse._StoreTrueAction, argparse._StoreAction))
        return plain or (every and action.nargs is None)

    supported_keys = {
        key for action in actions if supported(action) for key in _keys(action, every)
    }
    refused = {
        key: type(action).__name__
        for action in actions
        if not supported(action) and not {"--config", "--help", "-h"} & set(action.option_strings)
        for key in _keys(action, every)
        if not every or key not in supported_keys
    }
    flags: list[str] = []
    for key, value in data.items():
        norm = str(key).replace("-", "_")
        if norm in refused:
            raise LaunchRefused(
                f"ValueError: Unsupported config option '{norm}' with action '{refused[norm]}'"
            )
        if isinstance(value, bool):
            if norm in store_true:
                flags += [f"--{key}"] if value else []
            else:
                flags += [f"--{key}", str(value).lower()]
        elif isinstance(value, list):
            flags += [f"--{key}", *map(str, value)] if value else []
        elif isinstance(value, dict) and version_tuple(version) >= DICT_AS_JSON_SINCE:
            flags += [f"--{key}", json.dumps(value)]
        else:
            flags += [f"--{key}", str(value)]
    return [*flags, *argv[:index], *argv[index + 2 :]]
