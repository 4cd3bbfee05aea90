"""How a launcher hands its arguments to SGLang's server parser (pure).

A server runs as `python -m sglang.launch_server ARGS` or as `sglang serve ARGS`. The first gives
ARGS to `prepare_server_args` unchanged; `sglang serve` first takes out its backend selector
(`--model-type X`) and, from 0.5.16 on, turns a leading positional into `--model-path MODEL`
(sglang/cli/serve.py: `_extract_model_type_override`, then `_normalize_positional_model_path`,
which first appears in 0.5.16's wheel; 0.5.9-0.5.15 have the CLI but not the positional, and
their `get_model_path` stops with "--model-path is required"). Only the result of that is what
the server parser, and so the drift comparison, sees.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

LAUNCH_SERVER = "launch_server"
SERVE = "serve"
SERVE_POSITIONAL_SINCE = (0, 5, 16)
"""The first release whose sglang/cli/serve.py has `_normalize_positional_model_path`."""


@dataclass(frozen=True, slots=True)
class ParserArgs:
    """What SGLang's server parser is given for one launch, and what stood in the way."""

    args: tuple[str, ...]
    entry: str | None
    """LAUNCH_SERVER, SERVE, or None when the argv is no SGLang launch."""
    problem: str | None = None


def split_launch(argv: tuple[str, ...] | list[str]) -> tuple[str | None, tuple[str, ...]]:
    """(entry, the arguments after it) of `python -m sglang.launch_server ...`,
    `.../sglang/launch_server.py ...` or `[python] .../sglang serve ...`."""
    for index, arg in enumerate(argv):
        if arg == "sglang.launch_server" or arg.endswith("sglang/launch_server.py"):
            return LAUNCH_SERVER, tuple(argv[index + 1 :])
        if arg == "serve" and index and os.path.basename(argv[index - 1]) == "sglang":
            return SERVE, tuple(argv[index + 1 :])
    return None, ()


def _version(text: str | None) -> tuple[int, ...] | None:
    if not text:
        return None
    parts = []
    for part in text.split(".")[:3]:
        digits = "".join(char for char in part if char.isdigit())
        if not digits:
            return None
        parts.append(int(digits))
    return tuple(parts)


def serve_takes_positional(version: str | None) -> bool | None:
    """Whether `sglang serve` of this release accepts the model as its first argument (None:
    the release is not known)."""
    numbers = _version(version)
    return None if numbers is None else numbers >= SERVE_POSITIONAL_SINCE


def without_model_type(args: tuple[str, ...]) -> tuple[str, ...]:
    """`sglang serve`'s backend selector taken out, as `_extract_model_type_override` does."""
    out: list[str] = []
    skip = False
    for arg in args:
        if skip:
            skip = False
        elif arg == "--model-type":
            skip = True
        elif not arg.startswith("--model-type="):
            out.append(arg)
    return tuple(out)


def parser_args(argv: tuple[str, ...] | list[str], version: str | None = None) -> ParserArgs:
    """The arguments SGLang's server parser gets from this whole argv, on release `version`
    (None: unknown; a running `sglang serve MODEL` is then its own proof that it was accepted)."""
    entry, args = split_launch(argv)
    if entry != SERVE:
        return ParserArgs(args, entry)
    args = without_model_type(args)
    if not args or args[0].startswith("-"):
        return ParserArgs(args, entry)
    if serve_takes_positional(version) is False:
        since = ".".join(map(str, SERVE_POSITIONAL_SINCE))
        return ParserArgs(
            args,
            entry,
            f"`sglang serve {args[0]}`: sglang {version} does not take the model as a positional "
            f"argument (from {since} on it does); use `--model-path {args[0]}`",
        )
    return ParserArgs(("--model-path", args[0], *args[1:]), entry)


def flag(argv: tuple[str, ...] | list[str], name: str) -> str | None:
    """The value of `name` in argv (`--port 30000` or `--port=30000`), None when absent."""
    for index, arg in enumerate(argv):
        if arg == name and index + 1 < len(argv):
            return argv[index + 1]
        if arg.startswith(name + "="):
            return arg.split("=", 1)[1]
    return None
