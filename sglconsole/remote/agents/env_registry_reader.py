"""Read the installed SGLang's environment registry from its source, without importing it.

Prepended to the host parser check (remote/sglang_args.py): `read_env_registry(package_dir)`
parses sglang/srt/environ.py with ast (the `Envs` fields: kind and default as source text,
aliases; the deprecation list; the SGL_ -> SGLANG_ rewrite) and finds by a text search the
SGLANG_* names the package reads outside the registry, and which of those it reads only to warn
that they are gone (env_warn_only). The same facts tools/gen_env_table.py writes into
sglconsole/data/envs/. Runs on the host's python3: stdlib only, Python 3.6 syntax.
"""

import ast
import os
import re

from env_warn_only import reads_by_name  # inlined by source()

# A read is a quoted SGLANG_*/SGL_* name after a reader (`os.getenv(`, `environ.get(`,
# `environ[`, `get_bool_env_var(`...) or before `in os.environ`. Found name first: one regex that
# begins with the readers' alternation tried it at every offset of 4,700 files (1.4 s of 2.8 s).
_QUOTED = re.compile(r"[\"']((?:SGLANG|SGL)_[A-Z0-9_]+)[\"']")
_READER_ENDS = re.compile(r"(?:getenv|environ\.get|environ\[|get_(?:bool|int|float|str)_env_var)\Z")
_IN_ENVIRON = re.compile(r"\s+(?:not\s+)?in\s+os\.environ")


def _names_read(text):
    """The SGLANG_*/SGL_* names TEXT reads from the environment by their reader's words."""
    names = set()
    if "SGL" not in text:
        return names
    for match in _QUOTED.finditer(text):
        start = match.start()
        while start and text[start - 1].isspace():
            start -= 1
        if start and text[start - 1] == "(":
            start -= 1
        if _READER_ENDS.search(text, max(0, start - 24), start) or _IN_ENVIRON.match(
            text, match.end()
        ):
            names.add(match.group(1))
    return names


def _text(node):
    if node is None:
        return None
    value = getattr(node, "value", getattr(node, "s", None))
    return value if isinstance(value, str) and not isinstance(node, ast.Call) else None


def _name(node):
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return _name(node.value) + "." + node.attr
    return ""


def _source(lines, node):
    """The node's source text (3.8+ knows where it ends), else the literal's repr."""
    if node is None:
        return None
    if getattr(node, "end_lineno", None) is not None:
        first, last = node.lineno - 1, node.end_lineno - 1
        if first == last:
            return lines[first][node.col_offset : node.end_col_offset].decode("utf-8")
        part = [lines[first][node.col_offset :]] + lines[first + 1 : last]
        return b"".join(part + [lines[last][: node.end_col_offset]]).decode("utf-8")
    try:
        return repr(ast.literal_eval(node))
    except ValueError:
        return None


def _registry(tree, text):
    lines = text.encode("utf-8").splitlines(True)  # ast's columns count UTF-8 bytes
    fields, aliases = {}, {}
    for cls in tree.body:
        if not (isinstance(cls, ast.ClassDef) and cls.name == "Envs"):
            continue
        for stmt in cls.body:
            target = (
                stmt.targets[0] if isinstance(stmt, ast.Assign) else getattr(stmt, "target", None)
            )
            call = getattr(stmt, "value", None)
            if not (isinstance(target, ast.Name) and isinstance(call, ast.Call)):
                continue
            kind = _name(call.func)
            if not kind.startswith("Env"):
                continue
            keywords = dict(
                (keyword.arg, keyword.value) for keyword in call.keywords if keyword.arg
            )
            default = call.args[0] if call.args else keywords.get("default")
            fields[target.id] = [kind, _source(lines, default)]
            alias = (
                _text(call.args[1])
                if len(call.args) > 1
                else _text(keywords.get("deprecated_name"))
            )
            if alias:
                aliases[alias] = target.id
    return fields, aliases


def _deprecated(tree):
    out = {}
    for node in ast.walk(tree):
        targets = getattr(node, "targets", None) or [getattr(node, "target", None)]
        name = _name(targets[0]) if isinstance(node, (ast.Assign, ast.AnnAssign)) else ""
        if name in ("_DEPRECATED_ENVS", "_deprecated_ms_to_s") and isinstance(node.value, ast.Dict):
            for key, value in zip(node.value.keys, node.value.values):  # noqa: B905 - 3.6
                if _text(key) is None:
                    continue
                if isinstance(value, ast.Call):
                    keywords = dict(
                        (keyword.arg, keyword.value) for keyword in value.keywords if keyword.arg
                    )
                    replacement = (
                        _text(value.args[0]) if value.args else _text(keywords.get("replacement"))
                    )
                    out[_text(key)] = [replacement, _text(keywords.get("note"))]
                else:
                    out[_text(key)] = [_text(value), "ms -> s"]
        if isinstance(node, ast.Call) and node.args and _text(node.args[0]):
            second = _text(node.args[1]) if len(node.args) > 1 else None
            if _name(node.func) == "_print_deprecated_env":
                out[_text(node.args[0])] = [second, None]
            elif _name(node.func) == "_warn_deprecated_env_to_cli_flag":
                out[_text(node.args[0])] = [None, second]
    return out


def _rewrites(tree):
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Call)
            and _name(node.func).endswith(".replace")
            and len(node.args) >= 2
        ):
            if _text(node.args[0]) == "SGL_" and _text(node.args[1]) == "SGLANG_":
                return True
    return False


def _read_elsewhere(package_dir, known):
    """({name: files reading it}, {name: files} for the names every one of them reads only to
    warn); only the few files the text search finds are parsed."""
    found, warn_only = {}, {}
    for folder, dirs, files in os.walk(package_dir):
        relative = os.path.relpath(folder, os.path.dirname(package_dir)).replace(os.sep, "/")
        if relative == "sglang/test" or relative.startswith("sglang/test/"):
            dirs[:] = []
            continue
        for name in files:
            path = relative + "/" + name
            if not name.endswith(".py") or path == "sglang/srt/environ.py":
                continue
            try:
                with open(os.path.join(folder, name), encoding="utf-8", errors="replace") as handle:
                    text = handle.read()
            except (IOError, OSError):
                continue
            names = _names_read(text) - set(known)
            if not names:
                continue
            try:
                reads = reads_by_name(ast.parse(text))
            except (SyntaxError, ValueError):
                reads = {}
            for var in names:
                found.setdefault(var, set()).add(path)
                warn_only[var] = warn_only.get(var, True) and reads.get(var, False)
    return (
        dict((name, sorted(paths)) for name, paths in found.items()),
        dict((name, sorted(found[name])) for name, only in warn_only.items() if only),
    )


def read_env_registry(package_dir):
    """The registry as a JSON-able dict, or {"error": why} when it cannot be read."""
    path = os.path.join(package_dir, "srt", "environ.py")
    try:
        with open(path, encoding="utf-8", errors="replace") as handle:
            text = handle.read()
        tree = ast.parse(text)
    except (IOError, OSError, SyntaxError, ValueError) as exc:
        return {"error": "%s: %s" % (path, exc)}
    fields, aliases = _registry(tree, text)
    if not fields:
        return {"error": "%s: no Envs registry" % path}
    elsewhere, warn_only = _read_elsewhere(package_dir, fields)
    return {
        "path": path,
        "vars": fields,
        "aliases": aliases,
        "deprecated": _deprecated(tree),
        "sgl_prefix_rewrite": _rewrites(tree),
        "read_elsewhere": elsewhere,
        "read_only_to_warn": warn_only,
    }
