"""What a SGLang release's `ServerArgs` refuses and asks for instead, read from its source with ast.

One job: find each `raise ValueError(...)` in `ServerArgs._handle_mamba_radix_cache` whose message
names its remedy ("please use --FLAG VALUE and set VAR=VALUE"), and write it as data: the message,
the conditions on the path to it (each `if`/`elif` test, negated on the `else` side, as
`{"field", "test", "value"}`; a release's helper like `enable_mamba_extra_buffer()` is read
through to the comparison it returns), the remedy (args and env) and the model architectures the
check applies to (those whose branch of the model adjustments calls the function, plus the
linear-attention registry's `arch_names`). A path through a test this reader cannot state as data
is left out, never guessed; the device is CUDA (`is_hip()` false, `is_cuda()` true), as in the
simulator's other tables. Stdlib only; used by tools/gen_sim_version_table.py (the simulator
refuses as the release does) and tools/gen_server_args_checks.py (the console's copy)."""

from __future__ import annotations

import ast
import re
from pathlib import Path

FUNCTION = "_handle_mamba_radix_cache"
PLATFORM = {"is_hip": False, "is_cuda": True, "is_musa": False, "is_npu": False, "is_xpu": False}
_REMEDY = re.compile(
    r"please use (--[\w-]+) ([\w.-]+?)(?: and set ([A-Z][A-Z0-9_]*)=([\w.-]+?))?\.?\s*$"
)


class Unstated(Exception):
    """A test this reader cannot state as data."""


def _message(node: ast.expr) -> str:
    """The message of `ValueError(...)`: literal parts kept, `{expr}` for formatted ones."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.JoinedStr):
        parts = []
        for value in node.values:
            if isinstance(value, ast.Constant):
                parts.append(str(value.value))
            else:
                parts.append("{" + ast.unparse(value.value) + "}")
        return "".join(parts)
    raise Unstated(ast.unparse(node))


def _helpers(cls: ast.ClassDef) -> dict[str, ast.expr]:
    """`def NAME(self) -> bool: return EXPR` methods, by name."""
    found = {}
    for item in cls.body:
        if isinstance(item, ast.FunctionDef) and len(item.body) == 1:
            statement = item.body[0]
            if isinstance(statement, ast.Return) and statement.value is not None:
                found[item.name] = statement.value
    return found


def _field(node: ast.expr) -> str:
    if (
        isinstance(node, ast.Attribute)
        and isinstance(node.value, ast.Name)
        and node.value.id == "self"
    ):
        return node.attr
    raise Unstated(ast.unparse(node))


def _conditions(test: ast.expr, holds: bool, helpers: dict[str, ast.expr]) -> list[dict] | None:
    """`test` (true when `holds`) as conditions; None: the path cannot run on CUDA."""
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        return _conditions(test.operand, not holds, helpers)
    if isinstance(test, ast.Call) and not test.args:
        function = test.func
        if isinstance(function, ast.Name) and function.id in PLATFORM:
            return [] if PLATFORM[function.id] == holds else None
        if (
            isinstance(function, ast.Attribute)
            and isinstance(function.value, ast.Name)
            and function.value.id == "self"
            and function.attr in helpers
        ):
            return _conditions(helpers[function.attr], holds, helpers)
        raise Unstated(ast.unparse(test))
    if (
        isinstance(test, ast.Compare)
        and len(test.ops) == 1
        and isinstance(test.comparators[0], ast.Constant)
    ):
        field, operator, right = _field(test.left), test.ops[0], test.comparators[0]
        if not isinstance(right, ast.Constant):
            raise Unstated(ast.unparse(test))
        if isinstance(operator, (ast.Is, ast.Eq)):
            return [{"field": field, "test": "==" if holds else "!=", "value": right.value}]
        if isinstance(operator, (ast.IsNot, ast.NotEq)):
            return [{"field": field, "test": "!=" if holds else "==", "value": right.value}]
        raise Unstated(ast.unparse(test))
    if (
        isinstance(test, ast.Compare)
        and len(test.ops) == 1
        and isinstance(test.ops[0], (ast.In, ast.NotIn))
        and isinstance(test.comparators[0], (ast.Tuple, ast.List))
        and all(isinstance(item, ast.Constant) for item in test.comparators[0].elts)
    ):
        inside = holds == isinstance(test.ops[0], ast.In)
        values = [item.value for item in test.comparators[0].elts]
        return [{"field": _field(test.left), "test": "in" if inside else "not in", "value": values}]
    return [{"field": _field(test), "test": "truthy" if holds else "falsy", "value": None}]


def _raises(body: list[ast.stmt], path: list[dict], helpers, found: list) -> None:
    """Walk statements, collecting (message, conditions) of each `raise ValueError(...)`."""
    for statement in body:
        if isinstance(statement, ast.If):
            for side, branch in ((True, statement.body), (False, statement.orelse)):
                try:
                    more = _conditions(statement.test, side, helpers)
                except Unstated:
                    continue
                if more is not None:
                    fresh = [item for item in more if item not in path]
                    _raises(branch, path + fresh, helpers, found)
        elif (
            isinstance(statement, ast.Raise)
            and isinstance(statement.exc, ast.Call)
            and isinstance(statement.exc.func, ast.Name)
            and statement.exc.func.id == "ValueError"
            and statement.exc.args
        ):
            try:
                found.append((_message(statement.exc.args[0]), path, statement.lineno))
            except Unstated:
                pass
        elif isinstance(statement, ast.Return):
            return


def _architectures(tree: ast.Module, pkg: Path) -> list[str]:
    """Architectures whose model adjustments call FUNCTION: string constants in the test of each
    `if`/`elif` whose own body calls it, plus the linear-attention registry's `arch_names`."""
    names: set[str] = set()
    for node in ast.walk(tree):
        if not isinstance(node, ast.If):
            continue
        calls = any(
            isinstance(inner, ast.Attribute) and inner.attr == FUNCTION
            for statement in node.body
            for inner in ast.walk(statement)
        )
        if calls:
            names.update(
                constant.value
                for constant in ast.walk(node.test)
                if isinstance(constant, ast.Constant)
                and isinstance(constant.value, str)
                and constant.value.endswith(("ForCausalLM", "ForConditionalGeneration"))
            )
    registry = pkg / "srt" / "configs" / "linear_attn_model_registry.py"
    if registry.is_file():
        for node in ast.walk(ast.parse(registry.read_text(encoding="utf-8"))):
            if isinstance(node, ast.keyword) and node.arg == "arch_names":
                names.update(
                    constant.value
                    for constant in ast.walk(node.value)
                    if isinstance(constant, ast.Constant) and isinstance(constant.value, str)
                )
    return sorted(names)


def server_args_checks(pkg: Path) -> list[dict]:
    """The checks of the release whose package folder is `pkg` (see the module docstring)."""
    source = pkg / "srt" / "server_args.py"
    tree = ast.parse(source.read_text(encoding="utf-8"))
    classes = (node for node in tree.body if isinstance(node, ast.ClassDef))
    cls = next((node for node in classes if node.name == "ServerArgs"), None)
    function = next(
        (
            node
            for node in (cls.body if cls else [])
            if isinstance(node, ast.FunctionDef) and node.name == FUNCTION
        ),
        None,
    )
    if function is None:
        return []
    found: list = []
    _raises(function.body, [], _helpers(cls), found)
    checks = []
    for message, conditions, line in found:
        remedy = _REMEDY.search(message)
        if remedy is None:
            continue
        flag, value, variable, setting = remedy.groups()
        checks.append(
            {
                "id": "mamba_radix_cache_speculative",
                "where": f"srt/server_args.py:{line} (ServerArgs.{FUNCTION})",
                "error": f"ValueError: {message}",
                "when": conditions,
                "architectures": _architectures(tree, pkg),
                "remedy": {
                    "args": [flag, value],
                    "env": {variable: setting} if variable else {},
                },
            }
        )
    return checks
