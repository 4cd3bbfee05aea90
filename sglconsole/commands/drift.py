"""diff, argdiff: the running server next to its profile, and any two command lines."""

from __future__ import annotations

import argparse
import re
import shlex
import sys

from rich.table import Table
from rich.text import Text

from sglconsole import config
from sglconsole.commands.output import DIFF_SCHEMA, print_json
from sglconsole.commands.registry import command, config_path, run_async, stdout
from sglconsole.core import drift
from sglconsole.core.drift_meaning import JUDGES, meaning_lines
from sglconsole.core.flag_hints import did_you_mean
from sglconsole.core.launch_form import parser_args
from sglconsole.core.long_values import elide
from sglconsole.core.text import safe
from sglconsole.errors import UsageError
from sglconsole.remote.drift import env_registry
from sglconsole.remote.ssh.connection import SshFleet

STATE_STYLE = {
    drift.State.SAME: "dim",
    drift.State.DIFFERENT: "bold red",
    drift.State.ONLY_PROFILE: "bold yellow",
    drift.State.ONLY_RUNNING: "bold yellow",
    drift.State.DEFAULTED_DIFFERENTLY: "yellow",
    drift.State.NO_EFFECT: "dim",
}


def parse_target(text: str) -> tuple[str, int | None]:
    host, _, port = text.rpartition(":")
    if not host:
        return text, None
    if not port.isdigit():
        raise UsageError(f"expected HOST or HOST:PORT, got {text!r}")
    return host, int(port)


def report_table(report: drift.Report, left: str = "profile", right: str = "running") -> Table:
    table = Table(title_justify="left", show_lines=False)
    for column in ("flag / env", left, right, "resolved", "state"):
        table.add_column(column, overflow="fold")
    for row in report.rows:
        style = STATE_STYLE[row.state]
        name = Text(
            row.flag, style="bold" if row.performance and row.state not in drift.QUIET else ""
        )
        if row.performance and row.state not in drift.QUIET:
            name.append(" *", style="magenta")
        table.add_row(
            name,
            _cell(row.shown(row.profile)),
            _cell(row.shown(row.running)),
            # for a variable, the value in effect is the running one (unset: unset)
            _cell(row.shown(row.resolved)),
            Text(row.state.label + (f" ({JUDGES[row.judged]})" if row.note else ""), style=style),
        )
    return table


def container_table(report: drift.Report) -> Table | None:
    """The image and the `run` options, apart from SGLang's flags (none: neither side runs in a
    container)."""
    if not report.container:
        return None
    table = Table(title="container", title_justify="left", show_lines=False)
    for column in ("image / option", "profile", "running", "state"):
        table.add_column(column, overflow="fold")
    for row in report.container:
        state = Text("differs" if row.differs else "same", "bold red" if row.differs else "dim")
        table.add_row(row.label, _cell(row.profile), _cell(row.running), state)
    return table


def container_notes(report: drift.Report) -> list[str]:
    return [f"{row.label}: {row.note}" for row in report.container if row.note]


def _cell(value: object) -> Text:
    return safe("unset" if value is None else elide(str(value)), "dim" if value is None else "")


@command("diff", "compare a running server with its proven profile (exit 0 same, 1 drift, 2 error)")
def _diff(parser: argparse.ArgumentParser):
    parser.add_argument("target", metavar="HOST[:PORT]")
    parser.add_argument("--json", action="store_true")

    def handle(args: argparse.Namespace) -> int:
        cfg = config.load(config_path(args))
        host, port = parse_target(args.target)
        ports = [port] if port is not None else [server.port for server in cfg.host(host).servers]
        if port is not None:
            cfg.server(host, port)
        return run_async(_run_diff(cfg, host, ports, args.json))

    return handle


async def _run_diff(cfg: config.Config, host: str, ports: list[int], as_json: bool) -> int:
    from sglconsole.remote.drift import diff_server

    fleet = SshFleet(cfg.hosts)
    out = stdout()
    results = {}
    worst = 0
    try:
        for port in ports:
            report, process, verdict = await diff_server(cfg, host, port, fleet[host])
            worst = max(worst, 1 if report.differs else 0)
            results[f"{host}:{port}"] = report
            if not as_json:
                profile = cfg.server(host, port).profile
                title = (
                    f"{host}:{port}  pid {process.main.pid}  sglang {report.version}"
                    f"  profile {profile}"
                )
                out.print(safe(title, "bold"))
                out.print(report_table(report))
                boxed = container_table(report)
                if boxed is not None:
                    out.print(boxed)
                for line in container_notes(report):
                    out.print(safe(line, "dim"))
                for line in meaning_lines(report.rows):
                    out.print(safe(line))
                for line in report.note_lines():
                    out.print(safe(line, "dim"))
                if report.build_line():
                    out.print(safe(report.build_line()))
                if report.ambient_line():
                    out.print(safe(report.ambient_line(), "dim"))
                for note in report.notes:
                    out.print(safe(note, "dim"))
                out.print(Text(report.summary, style="red" if report.differs else "green"))
    finally:
        await fleet.close()
    if as_json:
        print_json({key: result.to_dict() for key, result in results.items()}, version=DIFF_SCHEMA)
    return worst


# ------------------------------------------------------------------ argdiff


ENV_ASSIGN = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")


def split_command(text: str) -> tuple[list[str], dict[str, str]]:
    """A pasted command line -> (launch_server flags, env assignments before the command)."""
    if text.startswith("@"):
        try:
            with open(text[1:], encoding="utf-8") as file:
                text = file.read()
        except OSError as exc:
            raise UsageError(f"{text[1:]}: {exc.strerror or exc}") from None
    text = text.replace("\\\n", " ")
    try:
        words = shlex.split(text, comments=True)
    except ValueError as exc:
        raise UsageError(f"cannot split {text[:60]!r}: {exc}") from None
    env: dict[str, str] = {}
    if words and words[0] == "env":
        words = words[1:]
    while words and ENV_ASSIGN.match(words[0]):
        key, _, value = words.pop(0).partition("=")
        env[key] = value
    for index, word in enumerate(words):
        if word == "serve":  # `sglang serve MODEL`: the positional as SGLang 0.5.16+ reads it
            return list(parser_args(("sglang", *words[index:])).args), env
        if word == "sglang.launch_server" or word.endswith("launch_server.py"):
            return words[index + 1 :], env
    if words and not words[0].startswith("-"):
        raise UsageError(
            f"{text[:60]!r} is not an SGLang command line (no sglang.launch_server in it)"
        )
    return words, env


@command(
    "argdiff", "compare two SGLang command lines by meaning (exit 0 same, 1 different, 2 invalid)"
)
def _argdiff(parser: argparse.ArgumentParser):
    parser.add_argument("a", help="a command line, or @FILE")
    parser.add_argument("b", help="a command line, or @FILE")
    parser.add_argument(
        "--python",
        help="interpreter whose SGLang judges (default: this one, with the sglang extra;"
        " without SGLang, the flag tables shipped with sglconsole)",
    )
    parser.add_argument(
        "--sglang-version",
        metavar="X",
        help="judge by the flag table of SGLang X shipped with sglconsole (or the newest one not"
        " newer) instead of an installed SGLang (default when SGLang is not importable: the"
        " newest table)",
    )
    parser.add_argument("--json", action="store_true")

    def handle(args: argparse.Namespace) -> int:
        argv_a, env_a = split_command(args.a)
        argv_b, env_b = split_command(args.b)
        verdict = _judge(args, {"a": argv_a, "b": argv_b})
        errors = {side: result.error for side, result in verdict.results.items() if result.error}
        hints = {side: did_you_mean(error, verdict.all_flags()) for side, error in errors.items()}
        if errors:
            return _print_invalid(errors, hints, verdict.version, args.json, _source(verdict))
        result_a, result_b = verdict.results["a"], verdict.results["b"]
        registry, env_judge = env_registry(verdict, verdict.version)
        report = drift.build(
            profile_values=result_a.values,
            profile_given=result_a.given,
            running_values=result_b.values,
            running_given=result_b.given,
            flag_of=verdict.flag_of,
            profile_env=env_a,
            running_env=env_b,
            version=verdict.version,
            env_registry=registry,
            env_judge=env_judge,
        )
        if args.json:
            rows = [
                {
                    "dest": row.name,
                    "flag": row.flag,
                    "a": row.shown(row.profile),
                    "b": row.shown(row.running),
                    "state": row.state.value,
                }
                for row in report.rows
            ]
            print_json(
                {"version": verdict.version, "source": _source(verdict), "rows": rows, "errors": {}}
            )
        else:
            out = stdout()
            judge = verdict.python or "flag table shipped with sglconsole"
            out.print(safe(f"SGLang {verdict.version} ({judge})", "bold"))
            out.print(report_table(report, "A", "B"))
            for line in report.note_lines():
                out.print(safe(line, "dim"))
            out.print(
                Text(
                    "same meaning"
                    if not report.differs
                    else f"{len(report.differences)} differences",
                    style="red" if report.differs else "green",
                )
            )
        return 1 if report.differs else 0

    return handle


def _judge(args: argparse.Namespace, argvs: dict[str, list[str]]):
    """The installed SGLang's parser (--python's, or this interpreter's); the shipped flag
    tables when --sglang-version asks for them or when SGLang is not importable here."""
    from sglconsole.config.flag_tables import available_versions, pick
    from sglconsole.remote.sglang_args import (
        canonicalize_local,
        canonicalize_table,
        not_importable,
    )

    if args.sglang_version and not args.python:
        chosen = pick(args.sglang_version)  # too old / not a version: UsageError
        verdict = canonicalize_table(args.sglang_version, argvs)
        # a version newer than the newest table (or between tables): that, in one line
        _say(
            f"argdiff: {chosen.note} (flag table shipped with sglconsole)"
            if chosen.note
            else f"argdiff: judged by the flag table of SGLang {verdict.version}"
            " shipped with sglconsole"
        )
        return verdict
    verdict = canonicalize_local(args.python, argvs)
    if not verdict.ok and not args.python and not_importable(verdict):
        verdict = canonicalize_table(None, argvs)
        _say(
            f"argdiff: SGLang is not importable here: judged by the flag table of SGLang"
            f" {verdict.version} shipped with sglconsole (--sglang-version X picks another:"
            f" {', '.join(available_versions())})"
        )
    if not verdict.ok:
        raise UsageError(verdict.error or "SGLang could not be asked")
    return verdict


def _say(line: str) -> None:
    print(line, file=sys.stderr)


def _source(verdict) -> str:
    return "sglang" if verdict.python else "flag-table"


def _print_invalid(
    errors: dict, hints: dict, version: str | None, as_json: bool, source: str = "sglang"
) -> int:
    if as_json:
        print_json(
            {
                "version": version,
                "source": source,
                "rows": [],
                "errors": errors,
                "hints": {side: hint for side, hint in hints.items() if hint},
            }
        )
    else:
        from sglconsole.remote.sglang_args import error_line

        out = stdout()
        for key, error in errors.items():
            out.print(safe(f"{key.upper()} is invalid for SGLang {version}:", "bold red"))
            out.print(safe(error_line(error)))
            if hints.get(key):
                out.print(safe(hints[key], "yellow"))
    return 2
