#!/usr/bin/env python3
"""Dump the real SGLang server's command-line flags as a JSON table.

Run it with an interpreter that has the real ``sglang`` importable, e.g. the
venv that ``tools/real_sglang_venv.sh`` builds::

    <venv>/bin/python tools/gen_flag_table.py sglconsole/data/flags/sglang-0.5.23.json

Any release, e.g. 0.5.17, in one command (its wheel first on sys.path of that venv,
stand-ins for what the venv lacks, both recorded in the table's ``environment``)::

    tools/gen_flag_table_overlay.sh 0.5.17

(tools/add_sglang_release.sh X makes all of a release's tables.)

It uses only the standard library and ``sglang``. The parser is built exactly
as SGLang builds it (``ServerArgs.add_cli_args(argparse.ArgumentParser())``)
and every action is recorded: option strings, dest, kind, nargs, const,
default, type, choices, required, help and metavar. Custom ``type=`` callables
and custom Action classes are described, and each is exercised on a few sample
inputs (on a throwaway namespace, with ``parser.error`` captured) so the table
says what they actually do rather than what their names suggest.

The output is deterministic for a given SGLang version and environment: keys
keep the parser's order, and nothing time- or host-dependent is written.
"""

from __future__ import annotations

import argparse
import contextlib
import inspect
import io
import json
import logging
import math
import os
import sys
import warnings

GENERATED_BY = "tools/gen_flag_table.py"
SCHEMA_VERSION = 1

# Samples fed to custom type= callables to record how they parse.
TYPE_PROBES = [
    "1",
    "1.5",
    "1k",
    "2Ki",
    "true",
    "false",
    "None",
    "",
    "abc",
    "[1, 2]",
    '{"a": 1}',
]

_STD_KINDS = {
    argparse._StoreAction: "store",
    argparse._StoreTrueAction: "store_true",
    argparse._StoreFalseAction: "store_false",
    argparse._StoreConstAction: "store_const",
    argparse._AppendAction: "append",
    argparse._AppendConstAction: "append_const",
    argparse._CountAction: "count",
    argparse._HelpAction: "help",
    argparse._VersionAction: "version",
    argparse._ExtendAction: "extend",
    argparse.BooleanOptionalAction: "boolean_optional",
}

_BUILTIN_TYPES = {str: "str", int: "int", float: "float", json.loads: "json", bool: "bool"}


class _ParserError(Exception):
    """Raised by the stub parser when an action calls ``parser.error``."""


class _StubParser(argparse.ArgumentParser):
    def error(self, message):  # noqa: D401 - argparse API
        raise _ParserError(message)

    def exit(self, status=0, message=None):
        raise _ParserError(f"exit({status}): {message}")


def jsonable(value):
    """Return ``value`` if it round-trips through JSON unchanged, else a repr record."""
    if value is None or isinstance(value, (bool, str)):
        return value
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    if isinstance(value, float):
        if math.isfinite(value):
            return value
        return {"repr": repr(value)}
    if isinstance(value, (list, tuple)):
        items = [jsonable(v) for v in value]
        return items
    if isinstance(value, dict) and all(isinstance(k, str) for k in value):
        return {k: jsonable(v) for k, v in value.items()}
    return {"repr": repr(value)}


def qualname(obj) -> str:
    name = getattr(obj, "__qualname__", None) or getattr(obj, "__name__", None)
    if name is None:
        name = type(obj).__qualname__
    return name


def first_doc_paragraph(obj) -> str | None:
    doc = inspect.getdoc(obj)
    if not doc:
        return None
    return doc.split("\n\n", 1)[0].replace("\n", " ").strip()


def describe_type(tp):
    """Return (type_name, type_info) for an action's ``type``."""
    if tp is None:
        return None, None
    for known, name in _BUILTIN_TYPES.items():
        if tp is known:
            return name, None
    name = qualname(tp)
    info = {
        "name": name,
        "module": getattr(tp, "__module__", None),
        "doc": first_doc_paragraph(tp),
        "probes": {},
    }
    for sample in TYPE_PROBES + _literal_probes(tp):
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                out = tp(sample)
            info["probes"][sample] = {"value": jsonable(out)}
        except Exception as exc:  # noqa: BLE001 - we record whatever it raises
            info["probes"][sample] = {"error": f"{type(exc).__name__}: {exc}"}
    info["parses_like"] = _classify_type(info["probes"])
    return f"custom:{name}", info


def _literal_probes(fn) -> list[str]:
    """String literals a type function compares its argument against.

    Catches special spellings such as a retired value it rejects with a
    message (``if raw == "old": raise ArgumentTypeError(...)``).
    """
    import ast
    import textwrap

    try:
        tree = ast.parse(textwrap.dedent(inspect.getsource(fn)))
    except (OSError, TypeError, SyntaxError):
        return []
    found: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Compare):
            for side in [node.left, *node.comparators]:
                consts = side.elts if isinstance(side, (ast.Tuple, ast.List, ast.Set)) else [side]
                for c in consts:
                    if (
                        isinstance(c, ast.Constant)
                        and isinstance(c.value, str)
                        and c.value not in TYPE_PROBES
                        and c.value not in found
                    ):
                        found.append(c.value)
    return found


def _ok(probes, sample):
    p = probes.get(sample, {})
    return "value" in p, p.get("value")


def _classify_type(probes) -> str:
    """A short, human-oriented guess of what a custom type does, from its probes."""
    ok_list, v_list = _ok(probes, "[1, 2]")
    ok_obj, v_obj = _ok(probes, '{"a": 1}')
    ok_k, v_k = _ok(probes, "1k")
    ok_true, v_true = _ok(probes, "true")
    ok_false, v_false = _ok(probes, "false")
    ok_none, v_none = _ok(probes, "None")
    ok_abc, v_abc = _ok(probes, "abc")
    if ok_list and v_list == [1, 2] and ok_obj and v_obj == {"a": 1}:
        return "json"
    if ok_k and v_k == 1000:
        return "int_with_si_iec_suffix"
    if ok_true and v_true is True and ok_false and v_false is False:
        return "bool_string"
    if ok_none and v_none is None and ok_abc and v_abc == "abc":
        return "str_or_none"
    if ok_abc and v_abc == "abc":
        return "str_like"
    return "custom"


@contextlib.contextmanager
def _capture_logs():
    """Capture log records and stdout/stderr emitted while an action runs."""
    records: list[str] = []

    class _H(logging.Handler):
        def emit(self, record):
            records.append(record.getMessage())

    root = logging.getLogger()
    handler = _H(level=logging.DEBUG)
    old_level = root.level
    root.addHandler(handler)
    root.setLevel(logging.DEBUG)
    out, err = io.StringIO(), io.StringIO()
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            yield records, out, err
    finally:
        root.removeHandler(handler)
        root.setLevel(old_level)


def _strip_ansi(text: str) -> str:
    import re

    return re.sub(r"\x1b\[[0-9;]*m", "", text)


def _sample_values(action):
    """Plausible values for exercising a custom action once."""
    nargs = action.nargs
    choices = list(action.choices) if action.choices is not None else None
    one = choices[0] if choices else "x"
    if nargs == 0:
        return [[]]
    if nargs in ("*", "+") or (isinstance(nargs, int) and nargs > 0):
        if choices:
            return [[one]]
        return [["x"], ['{"lora_name": "n", "lora_path": "p"}']]
    if nargs == "?":
        return [one]
    return [one]


def exercise_action(action):
    """Call a custom Action on a throwaway namespace and record what it does."""
    results = []
    for values in _sample_values(action):
        parser = _StubParser(prog="probe", add_help=False)
        ns = argparse.Namespace()
        option = action.option_strings[0] if action.option_strings else None
        entry = {"values": jsonable(values)}
        with _capture_logs() as (records, out, err):
            try:
                action(parser, ns, values, option)
                if hasattr(ns, action.dest):
                    entry["stores"] = jsonable(getattr(ns, action.dest))
                else:
                    entry["stores_nothing"] = True
            except _ParserError as exc:
                entry["parser_error"] = _strip_ansi(str(exc))
            except Exception as exc:  # noqa: BLE001
                entry["raises"] = f"{type(exc).__name__}: {exc}"
        msgs = [_strip_ansi(m) for m in records]
        for stream in (out.getvalue(), err.getvalue()):
            if stream.strip():
                msgs.append(_strip_ansi(stream.strip()))
        if msgs:
            entry["messages"] = msgs
        results.append(entry)
    return results


def describe_custom_action(action) -> dict:
    cls = type(action)
    info = {
        "class": cls.__name__,
        "module": cls.__module__,
        "bases": [b.__name__ for b in cls.__mro__[1:] if b is not object],
        "doc": first_doc_paragraph(cls) if cls.__doc__ else None,
    }
    # Extra constructor knobs that SGLang's deprecation actions carry.
    extra = {}
    for attr in ("new_flag", "const_value", "error_message"):
        if hasattr(action, attr):
            extra[attr] = jsonable(getattr(action, attr))
    if extra:
        info["attributes"] = extra
    info["on_use"] = exercise_action(action)
    return info


def describe_action(action, group_of) -> dict:
    cls = type(action)
    kind = _STD_KINDS.get(cls)
    if kind is None:
        kind = f"custom:{cls.__name__}"
    type_name, type_info = describe_type(action.type)
    choices = action.choices
    if choices is not None:
        try:
            choices = list(choices)
            # sets (e.g. dynamically built choice sets) have no stable order
            if isinstance(action.choices, (set, frozenset)):
                choices = sorted(choices, key=repr)
        except TypeError:
            choices = {"repr": repr(choices)}
    help_text = action.help
    entry = {
        "option_strings": list(action.option_strings),
        "dest": action.dest,
        "kind": kind,
        "nargs": action.nargs,
        "const": jsonable(action.const),
        "default": jsonable(action.default),
        "type": type_name,
        "choices": jsonable(choices) if choices is not None else None,
        "required": bool(action.required),
        "help": help_text,
        "help_suppressed": help_text == argparse.SUPPRESS,
        "metavar": jsonable(action.metavar),
        "group": group_of.get(id(action)),
    }
    if isinstance(action.choices, (set, frozenset)):
        entry["choices_unordered"] = True
    if type_info is not None:
        entry["type_info"] = type_info
    if kind.startswith("custom:"):
        entry["action_info"] = describe_custom_action(action)
        errors = [u["parser_error"] for u in entry["action_info"]["on_use"] if "parser_error" in u]
        if errors:
            # the flag exists only to stop the launch with this message
            entry["refuses"] = errors[0]
    if kind == "boolean_optional":
        entry["note"] = "argparse.BooleanOptionalAction: --flag stores True, --no-flag stores False"
    return entry


def build_table(environment: str | None = None, stubbed: list[str] | None = None) -> dict:
    import sglang
    from sglang.srt.server_args import ServerArgs

    parser = argparse.ArgumentParser()
    ServerArgs.add_cli_args(parser)

    group_of = {}
    for group in parser._action_groups:
        for a in group._group_actions:
            group_of[id(a)] = group.title
    mutex = []
    for mg in parser._mutually_exclusive_groups:
        mutex.append(
            {
                "required": mg.required,
                "members": [a.option_strings[0] for a in mg._group_actions if a.option_strings],
            }
        )

    actions = [describe_action(a, group_of) for a in parser._actions]

    all_options = [o for a in parser._actions for o in a.option_strings]

    prog, prog_source = _launcher_prog()
    table = {
        "schema_version": SCHEMA_VERSION,
        "sglang_version": sglang.__version__,
        "generated_by": GENERATED_BY,
        "python_version": "{}.{}".format(*sys.version_info[:2]),
    }
    if environment:
        # how the interpreter that imported sglang was put together (stand-ins etc.)
        table["environment"] = environment
    if stubbed is not None:
        # third-party modules stood in for (tools/real_sglang_overlay/_sglang_import_stubs.py)
        table["stubbed_modules"] = sorted(stubbed)
    table |= {
        # What a real `python -m sglang.launch_server` calls itself in usage/error
        # lines is decided by the launcher's own parser; see prog_usage_name.
        "prog_usage_name": prog,
        "prog_source": prog_source,
        "parser": {
            "allow_abbrev": parser.allow_abbrev,
            "prefix_chars": parser.prefix_chars,
            "fromfile_prefix_chars": parser.fromfile_prefix_chars,
            "conflict_handler": parser.conflict_handler,
            "argument_default": jsonable(parser.argument_default),
            "exit_on_error": getattr(parser, "exit_on_error", True),
        },
        "num_actions": len(actions),
        "num_option_strings": len(all_options),
        "mutually_exclusive_groups": mutex,
        "actions": actions,
    }
    return table


def _launcher_prog():
    """The ``prog`` of the parser that ``prepare_server_args`` builds.

    Returns ``(prog, source)``. Newer SGLang passes ``prog="sglang serve"``
    explicitly (source ``"explicit"``: every entry point prints it). Older
    releases build a bare ``ArgumentParser()``, whose prog is
    ``basename(sys.argv[0])``: ``launch_server.py`` under
    ``python -m sglang.launch_server`` (returned, source ``"argv0"``) and
    ``sglang`` under the ``sglang serve`` console script.
    """
    import ast

    try:
        from sglang.srt import server_args as mod

        src = inspect.getsource(mod.prepare_server_args)
    except Exception:  # noqa: BLE001
        return None, None
    tree = ast.parse(src.lstrip())
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Call)
            and getattr(node.func, "attr", getattr(node.func, "id", None)) == "ArgumentParser"
        ):
            for kw in node.keywords:
                if kw.arg == "prog" and isinstance(kw.value, ast.Constant):
                    return kw.value.value, "explicit"
            return "launch_server.py", "argv0"
    return None, None


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("out", help="output JSON path ('-' for stdout)")
    ap.add_argument(
        "--environment",
        help="how the interpreter running this was built (recorded as the table's 'environment')",
    )
    args = ap.parse_args(argv)
    clean_process()
    write(build_table(args.environment), args.out)
    return 0


def clean_process() -> None:
    """What every dump does before sglang is imported."""
    # Keep import-time chatter (missing optional deps etc.) off the table.
    warnings.simplefilter("ignore")
    # Environment variables can change choices/defaults (e.g.
    # SGLANG_KV_CANARY_ENABLE_TOKEN_ORACLE adds a sampling backend): the table
    # describes a plain launch, so drop them before sglang is imported.
    for key in list(os.environ):
        if key.startswith(("SGLANG_", "SGL_")):
            del os.environ[key]


def write(table: dict, out: str) -> None:
    text = json.dumps(table, indent=1, ensure_ascii=False) + "\n"
    if out == "-":
        sys.stdout.write(text)
    else:
        os.makedirs(os.path.dirname(os.path.abspath(out)), exist_ok=True)
        with open(out, "w", encoding="utf-8") as fh:
            fh.write(text)
        print(
            f"wrote {out}: sglang {table['sglang_version']}, {table['num_actions']} actions",
            file=sys.stderr,
        )


if __name__ == "__main__":
    raise SystemExit(main())
