"""Ask a host's own SGLang what an argv means.

SNIPPET runs under the server's interpreter (argv[0] of the process, or the
profile's `python`): it builds SGLang's parser with
``ServerArgs.add_cli_args``, parses each argv twice (once for values, once
with every default suppressed to learn what was *given*), and prints JSON.
It imports nothing but the standard library and sglang. The same snippet runs
locally when the `sglang` extra is installed (``canonicalize_local``).
"""

from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import dataclass, field

from sglconsole.remote.agents import source

MARKER = "SGLCONSOLE-JSON "

SNIPPET_MAIN = r"""
import argparse, contextlib, io, json, sys

MARKER = "SGLCONSOLE-JSON "

def jsonable(value):
    try:
        json.dumps(value)
        return value
    except (TypeError, ValueError):
        return {"repr": repr(value)}

def main():
    request = json.loads(sys.argv[1])
    try:
        import sglang
        from sglang.srt.server_args import ServerArgs
    except Exception as exc:
        error = "SGLang is not importable by %s: %s: %s" % (
            sys.executable, type(exc).__name__, exc)
        print(MARKER + json.dumps({"ok": False, "python": sys.executable, "error": error}))
        return
    try:  # the environment registry, read from the source (agents/env_registry_reader.py)
        where = os.path.dirname(os.path.abspath(sglang.__file__ or ""))
        env_registry = read_env_registry(where)
    except Exception as exc:
        env_registry = {"error": "%s: %s" % (type(exc).__name__, exc)}
    version = getattr(sglang, "__version__", None)
    if version is None:
        try:
            from importlib.metadata import version as dist_version
            version = dist_version("sglang")
        except Exception:
            version = "unknown"

    try:
        numbers = tuple(int(x) for x in str(version).split(".")[:3])
    except ValueError:
        numbers = (0,)
    # what the version itself prints
    prog = "sglang serve" if numbers >= (0, 5, 10) else "launch_server.py"

    def build():
        parser = argparse.ArgumentParser(prog=prog)
        ServerArgs.add_cli_args(parser)
        return parser

    parser = build()
    actions = {}
    for action in parser._actions:
        if action.option_strings and action.dest != "help":
            actions[action.dest] = {"flags": list(action.option_strings),
                                    "default": jsonable(action.default),
                                    "takes_value": action.nargs != 0}
    results = {}
    for key, argv in request["argvs"].items():
        err = io.StringIO()
        try:
            with contextlib.redirect_stderr(err):
                values = vars(build().parse_args(argv))
                quiet = build()
                for action in quiet._actions:
                    action.default = argparse.SUPPRESS
                given = sorted(vars(quiet.parse_args(argv)))
            results[key] = {"values": dict((k, jsonable(v)) for k, v in values.items()),
                            "given": given, "error": None}
        except SystemExit:
            error = err.getvalue().strip() or "argparse rejected the arguments"
            results[key] = {"values": {}, "given": [], "error": error}
    print(MARKER + json.dumps({"ok": True, "version": str(version), "python": sys.executable,
                               "actions": actions, "results": results,
                               "env_registry": env_registry}))

main()
"""
SNIPPET = source("env_registry_reader") + SNIPPET_MAIN


@dataclass
class Canonical:
    """One argv as a given SGLang version understands it."""

    values: dict[str, object] = field(default_factory=dict)
    given: set[str] = field(default_factory=set)
    error: str | None = None


@dataclass
class Verdict:
    ok: bool
    version: str | None
    python: str | None
    actions: dict[str, dict]
    results: dict[str, Canonical]
    error: str | None = None
    env_registry: dict | None = None
    """The SGLang's environment registry as read from its source on the host (None: not read)."""

    def flag_of(self, dest: str) -> str:
        flags = self.actions.get(dest, {}).get("flags") or [f"--{dest.replace('_', '-')}"]
        return max(flags, key=len) if all(flag.startswith("--") for flag in flags) else flags[0]

    def all_flags(self) -> list[str]:
        return [flag for action in self.actions.values() for flag in action.get("flags", [])]


def _verdict(data: dict) -> Verdict:
    results = {
        key: Canonical(
            result.get("values") or {}, set(result.get("given") or []), result.get("error")
        )
        for key, result in (data.get("results") or {}).items()
    }
    registry = data.get("env_registry")
    return Verdict(
        True,
        data.get("version"),
        data.get("python"),
        data.get("actions") or {},
        results,
        env_registry=registry if isinstance(registry, dict) and "vars" in registry else None,
    )


def canonicalize_table(version: str | None, argvs: dict[str, list[str]]) -> Verdict:
    """The same judgement from the flag table of SGLang `version` shipped with sglconsole
    (None: the newest), for when SGLang is not importable here."""
    from sglconsole.config.flag_tables import load_table
    from sglconsole.core.flag_table import parse

    return _verdict(parse(load_table(version), argvs))


def not_importable(verdict: Verdict) -> bool:
    """The interpreter ran, but has no SGLang."""
    return not verdict.ok and "SGLang is not importable" in (verdict.error or "")


def parse_output(stdout: str, stderr: str = "", python: str = "") -> Verdict:
    for line in reversed(stdout.splitlines()):
        if line.startswith(MARKER):
            try:
                data = json.loads(line[len(MARKER) :])
            except ValueError:
                break
            if not data.get("ok"):
                return Verdict(False, None, data.get("python"), {}, {}, data.get("error"))
            return _verdict(data)
    detail = (stderr.strip().splitlines() or ["no output"])[-1]
    return Verdict(
        False,
        None,
        python,
        {},
        {},
        f"{python or 'the interpreter'} could not run the SGLang check: {detail}",
    )


def error_line(error: str) -> str:
    """argparse's verdict without the usage it prints first (~600 lines for SGLang's parser):
    its `error:` line, else the last line."""
    lines = [line for line in error.strip().splitlines() if line.strip()]
    found = next((line for line in reversed(lines) if ": error: " in line), None)
    return found or (lines[-1] if lines else error)


def request(argvs: dict[str, list[str]]) -> str:
    return json.dumps({"argvs": argvs})


async def canonicalize_remote(
    ssh, python: str | list[str], argvs: dict[str, list[str]], timeout: float = 120
) -> Verdict:
    """Run SNIPPET with `python` on the host behind `ssh` (an SshHost); a list is the argv that
    runs the interpreter (in a container image: LaunchSpec.runner)."""
    runner = [python] if isinstance(python, str) else list(python)
    python = runner[-1] if isinstance(python, str) else " ".join(runner)
    result = await ssh.run([*runner, "-c", SNIPPET, request(argvs)], timeout=timeout)
    if (
        result.exit_status == 127
        or "No such file or directory" in result.stderr
        and not result.stdout
    ):
        return Verdict(False, None, python, {}, {}, f"{python}: no such interpreter on {ssh.name}")
    if result.exit_status is None:
        return Verdict(
            False, None, python, {}, {}, f"{python} timed out after {timeout:g}s importing SGLang"
        )
    return parse_output(result.stdout, result.stderr, python)


def canonicalize_local(
    python: str | None, argvs: dict[str, list[str]], timeout: float = 120
) -> Verdict:
    python = python or sys.executable
    try:
        proc = subprocess.run(
            [python, "-c", SNIPPET, request(argvs)], capture_output=True, text=True, timeout=timeout
        )
    except FileNotFoundError:
        return Verdict(False, None, python, {}, {}, f"{python}: no such interpreter")
    except subprocess.TimeoutExpired:
        return Verdict(
            False, None, python, {}, {}, f"{python} timed out after {timeout:g}s importing SGLang"
        )
    return parse_output(proc.stdout, proc.stderr, python)
