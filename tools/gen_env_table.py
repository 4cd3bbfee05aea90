#!/usr/bin/env python3
"""Dump the environment variables one SGLang release reads, as a JSON table.

    tools/gen_env_table.py SRC_OR_WHEEL OUT
    tools/gen_env_table.py /work/wheels/sglang-0.5.23-...whl sglconsole/data/envs/sglang-0.5.23.json

SRC_OR_WHEEL is a wheel (read with zipfile) or an unpacked folder that holds ``sglang/``
(or is the ``sglang`` package itself). Standard library only, and SGLang is never imported:
``sglang/srt/environ.py`` is read with ``ast``, so the table says what the source declares.

Recorded:
- ``vars``: every field of the ``Envs`` registry (name -> kind such as EnvBool/EnvInt/
  EnvBoolWithAlias, the default as source text, and ``deprecated_name`` for an alias);
- ``aliases``: deprecated name -> the registry variable that still reads it;
- ``deprecated``: the release's deprecation registry (``_DEPRECATED_ENVS``: name -> replacement,
  note) and, before it existed, the ``_print_deprecated_env``/``_warn_deprecated_env_to_cli_flag``
  calls and the ``_deprecated_ms_to_s`` renames;
- ``sgl_prefix_rewrite``: whether importing environ.py rewrites any ``SGL_X`` to ``SGLANG_X``;
- ``read_elsewhere``: ``SGLANG_*``/``SGL_*`` names read outside the registry
  (``os.environ.get``, ``os.getenv``, ``os.environ[...]``, ``"X" in os.environ``,
  ``get_bool_env_var``...) with the files that read them (``sglang/test/`` left out);
- ``read_only_to_warn``: those of them every read of which only decides a warning that the
  variable is gone (the rule of sglconsole/remote/agents/env_warn_only.py, which the host uses too).
The output is deterministic: keys sorted, nothing time- or host-dependent.
"""

from __future__ import annotations

import ast
import importlib.util
import json
import re
import sys
import zipfile
from pathlib import Path


def _warn_only_rule():
    """The host agent's module, loaded by path: no package import, so no dependency here."""
    path = Path(__file__).resolve().parents[1] / "sglconsole/remote/agents/env_warn_only.py"
    spec = importlib.util.spec_from_file_location("env_warn_only", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


WARN_ONLY = _warn_only_rule()

GENERATED_BY = "tools/gen_env_table.py"
SCHEMA_VERSION = 1
ENVIRON = "sglang/srt/environ.py"
SKIPPED_PREFIXES = ("sglang/test/",)
QUOTED_NAME = re.compile(r"['\"](SGLANG|SGL)_[A-Z0-9_]")  # only files naming one are parsed


class SourceError(Exception):
    pass


def read_sources(src: Path) -> tuple[dict[str, str], str | None, str | None]:
    """(package-relative path -> text of every .py under sglang/, wheel file name, version)."""
    if src.is_file() and src.suffix == ".whl":
        with zipfile.ZipFile(src) as wheel:
            files = {
                name: wheel.read(name).decode("utf-8", "replace")
                for name in wheel.namelist()
                if name.startswith("sglang/") and name.endswith(".py")
            }
            metadata = next(
                (n for n in wheel.namelist() if n.endswith(".dist-info/METADATA")), None
            )
            text = wheel.read(metadata).decode("utf-8", "replace") if metadata else ""
        match = re.search(r"^Version: (\S+)$", text, re.M) or re.match(r"sglang-([^-]+)-", src.name)
        return files, src.name, match.group(1) if match else None
    if src.is_dir():
        root = (
            src
            if (src / "srt" / "environ.py").exists() and src.name == "sglang"
            else src / "sglang"
        )
        if not (root / "srt" / "environ.py").exists():
            raise SourceError(f"{src}: no sglang/srt/environ.py under it")
        files = {
            "sglang/" + path.relative_to(root).as_posix(): path.read_text("utf-8", "replace")
            for path in sorted(root.rglob("*.py"))
        }
        return files, None, None
    raise SourceError(f"{src}: expected a sglang .whl or an unpacked folder holding sglang/")


def version_of(files: dict[str, str]) -> str | None:
    text = files.get("sglang/version.py", "")
    match = re.search(r"__version__\s*=\s*['\"]([^'\"]+)", text)
    return match.group(1) if match else None


def _func_name(node: ast.AST) -> str:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return f"{_func_name(node.value)}.{node.attr}"
    return ""


def _str(node: ast.AST | None) -> str | None:
    return node.value if isinstance(node, ast.Constant) and isinstance(node.value, str) else None


_LINE = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+\Z")


class _Source:
    """``ast.get_source_segment`` of one text, its lines split once: the standard one splits the
    whole text again for every node (770 registry fields: half the tool's time, ~9 CPU-s)."""

    def __init__(self, text: str):
        # as ast._splitlines_no_ff: only \r\n, \r and \n end a line (not \f, \v, \x1c...)
        self.lines = _LINE.findall(text)

    def segment(self, node: ast.AST) -> str | None:
        if getattr(node, "end_lineno", None) is None or node.end_col_offset is None:
            return None
        first, last = node.lineno - 1, node.end_lineno - 1
        start, end = node.col_offset, node.end_col_offset  # UTF-8 byte offsets
        if first == last:
            return self.lines[first].encode()[start:end].decode()
        return "".join(
            [
                self.lines[first].encode()[start:].decode(),
                *self.lines[first + 1 : last],
                self.lines[last].encode()[:end].decode(),
            ]
        )


def _registry(tree: ast.Module, text: str) -> dict[str, dict]:
    source = _Source(text)
    envs = next((n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == "Envs"), None)
    if envs is None:
        raise SourceError(f"{ENVIRON}: no `class Envs` registry")
    fields = {}
    for stmt in envs.body:
        target = stmt.targets[0] if isinstance(stmt, ast.Assign) else getattr(stmt, "target", None)
        value = getattr(stmt, "value", None)
        if not isinstance(target, ast.Name) or not isinstance(value, ast.Call):
            continue
        kind = _func_name(value.func)
        if not kind.startswith("Env"):
            continue
        keywords = {k.arg: k.value for k in value.keywords if k.arg}
        default = value.args[0] if value.args else keywords.get("default")
        record = {
            "kind": kind,
            "default": None if default is None else source.segment(default),
        }
        alias = (
            _str(value.args[1]) if len(value.args) > 1 else _str(keywords.get("deprecated_name"))
        )
        if alias:
            record["deprecated_name"] = alias
        fields[target.id] = record
    return fields


def _deprecations(tree: ast.Module) -> dict[str, dict]:
    out: dict[str, dict] = {}
    for node in ast.walk(tree):
        # _DEPRECATED_ENVS = {"OLD": _DeprecatedEnv(replacement=..., note=...)}
        target = None
        if isinstance(node, ast.Assign) and isinstance(node.targets[0], ast.Name):
            target = node.targets[0].id
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            target = node.target.id
        if target in ("_DEPRECATED_ENVS", "_deprecated_ms_to_s") and isinstance(
            node.value, ast.Dict
        ):
            for key, value in zip(node.value.keys, node.value.values, strict=True):
                name = _str(key)
                if name is None:
                    continue
                if isinstance(value, ast.Call):
                    keywords = {k.arg: k.value for k in value.keywords if k.arg}
                    replacement = _str(value.args[0]) if value.args else None
                    out[name] = {
                        "replacement": replacement or _str(keywords.get("replacement")),
                        "note": _str(keywords.get("note")),
                        "source": target,
                    }
                else:
                    out[name] = {"replacement": _str(value), "note": "ms -> s", "source": target}
        if isinstance(node, ast.Call) and node.args:
            func = _func_name(node.func)
            first = _str(node.args[0])
            second = _str(node.args[1]) if len(node.args) > 1 else None
            if func == "_print_deprecated_env" and first:
                out[first] = {"replacement": second, "note": None, "source": func}
            elif func == "_warn_deprecated_env_to_cli_flag" and first:
                out[first] = {"replacement": None, "note": second, "source": func}
    return out


def _sgl_rewrite(tree: ast.Module) -> bool:
    """Whether environ.py copies SGL_X to SGLANG_X (a `.replace("SGL_", "SGLANG_", 1)`)."""
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Call)
            and _func_name(node.func).endswith(".replace")
            and len(node.args) >= 2
            and _str(node.args[0]) == "SGL_"
            and _str(node.args[1]) == "SGLANG_"
        ):
            return True
    return False


def table(src: Path) -> dict:
    files, wheel, version = read_sources(src)
    if ENVIRON not in files:
        raise SourceError(f"{src}: no {ENVIRON}")
    # a wheel's METADATA is the release; source trees often say 0.0.0.dev0 in version.py
    version = version or version_of(files)
    text = files[ENVIRON]
    tree = ast.parse(text)
    registry = _registry(tree, text)
    elsewhere: dict[str, set[str]] = {}
    warn_only: dict[str, bool] = {}
    for path, source in sorted(files.items()):
        if path == ENVIRON or path.startswith(SKIPPED_PREFIXES) or not QUOTED_NAME.search(source):
            continue
        try:
            module = ast.parse(source)
        except SyntaxError:
            continue
        # every SGLANG_*/SGL_* name the module reads from the environment (the host agent's
        # rule, env_warn_only), each with whether its reads only decide a warning
        reads = WARN_ONLY.reads_by_name(module)
        for name in reads.keys() - set(registry):
            elsewhere.setdefault(name, set()).add(path)
            warn_only[name] = warn_only.get(name, True) and reads.get(name, False)
    return {
        "schema_version": SCHEMA_VERSION,
        "generated_by": GENERATED_BY,
        "sglang_version": version,
        "wheel": wheel,
        "source": ENVIRON,
        "vars": registry,
        "aliases": {
            record["deprecated_name"]: name
            for name, record in registry.items()
            if "deprecated_name" in record
        },
        "deprecated": _deprecations(tree),
        "sgl_prefix_rewrite": _sgl_rewrite(tree),
        "read_elsewhere": {name: sorted(paths) for name, paths in elsewhere.items()},
        "read_only_to_warn": {
            name: sorted(elsewhere[name]) for name, only in warn_only.items() if only
        },
    }


def main(argv: list[str]) -> int:
    if len(argv) != 2:
        print("usage: gen_env_table.py SRC_OR_WHEEL OUT", file=sys.stderr)
        return 2
    src, out = Path(argv[0]), Path(argv[1])
    try:
        data = table(src)
    except (SourceError, SyntaxError, zipfile.BadZipFile, OSError) as error:
        print(f"gen_env_table: {error}", file=sys.stderr)
        return 1
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(data, indent=1, sort_keys=True) + "\n")
    print(
        f"{out}: sglang {data['sglang_version']}: {len(data['vars'])} registry variables, "
        f"{len(data['deprecated'])} deprecated, {len(data['read_elsewhere'])} read elsewhere"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
