"""ServerArgs' refusals of a release, from its version table: a launch the release refuses fails
as it fails there (the traceback's last frame and SGLang's ValueError, exit 1), before anything
is logged. The checks are generated from the release's server_args.py
(tools/server_args_checks.py): 0.5.10-0.5.13 refuse speculative decoding with radix cache on a
hybrid-mamba model unless `--mamba-scheduler-strategy extra_buffer`."""

from __future__ import annotations

from sglconsole.sim import versiontable
from sglconsole.sim.server.failures import StartupFailed

_TRACEBACK = "Traceback (most recent call last):"


def _holds(condition: dict, args: dict) -> bool:
    value, wanted, test = args.get(condition["field"]), condition["value"], condition["test"]
    if test == "==":
        return value == wanted
    if test == "!=":
        return value != wanted
    if test == "in":
        return value in wanted
    if test == "not in":
        return value not in wanted
    return bool(value) == (test == "truthy")


def refuse(version: str, args: dict, model: dict | None) -> None:
    """Raise StartupFailed where a check of `version` refuses `args` for `model` (config.json)."""
    arch = ((model or {}).get("architectures") or [""])[0]
    for check in versiontable.load(version).get("server_args_checks") or []:
        if arch not in check["architectures"]:
            continue
        if all(_holds(condition, args) for condition in check["when"]):
            where, _, function = check["where"].partition(" ")
            path, _, line = where.partition(":")
            function = function.strip("()").split(".")[-1]
            raise StartupFailed(
                [
                    _TRACEBACK,
                    f'  File "sglang/{path}", line {line}, in {function}',
                    check["error"].replace("{model_arch}", arch),
                ]
            )
