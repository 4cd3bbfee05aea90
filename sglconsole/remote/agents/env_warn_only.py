"""Which SGLANG_* variables a module reads only to warn about them (stdlib, Python 3.6 syntax).

A release that retires a variable often keeps one read of it, to say it is gone: 0.5.14-0.5.22's
arg_groups/speculative_hook.py has `if os.getenv("SGLANG_ENABLE_SPEC_V2") is not None:
logger.warning("SGLANG_ENABLE_SPEC_V2 has been removed ...")`. Such a read changes nothing the
server does, so a difference in that variable is no drift. A read counts as warn-only when it
stands in the test of an `if` without `else` whose body only logs, warns or prints; a variable is
warn-only in a module when every read of it there is. Used on the host (inlined into
env_registry_reader) and by tools/gen_env_table.py for the shipped tables: one rule for both.
"""

import ast
import re

_VARIABLE = re.compile(r"^(?:SGLANG|SGL)_[A-Z0-9_]+$")
_READER = re.compile(
    r"(?:^|\.)(?:getenv|environ\.get|environ\.setdefault|environ\.pop|get_bool_env_var|"
    r"get_int_env_var|get_float_env_var|get_str_env_var|_get_bool_env_var|_get_int_env_var|"
    r"get_env_var|env_var|getenv_bool|getenv_int)$"
)
_NOTICE = ("warning", "warn", "info", "debug", "error", "warning_once", "info_once", "print")


def _dotted(node):
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return _dotted(node.value) + "." + node.attr
    return ""


def _literal(node):
    if isinstance(node, ast.Index):  # Python < 3.9 wraps a subscript's key
        node = node.value
    value = getattr(node, "value", getattr(node, "s", None))
    return value if isinstance(value, str) and not isinstance(node, ast.Call) else None


def read_of(node):
    """The SGLANG_*/SGL_* name this node reads from the environment, else None."""
    name = None
    if isinstance(node, ast.Call) and node.args and _READER.search(_dotted(node.func)):
        name = _literal(node.args[0])
    elif isinstance(node, ast.Subscript) and _dotted(node.value).endswith("environ"):
        name = _literal(node.slice)
    elif (
        isinstance(node, ast.Compare)
        and isinstance(node.ops[0], (ast.In, ast.NotIn))
        and _dotted(node.comparators[0]).endswith("environ")
    ):
        name = _literal(node.left)
    return name if name and _VARIABLE.match(name) else None


def _only_notices(statements):
    for statement in statements:
        if isinstance(statement, ast.Pass):
            continue
        call = getattr(statement, "value", None)
        if not (isinstance(statement, ast.Expr) and isinstance(call, ast.Call)):
            return False
        if _dotted(call.func).split(".")[-1] not in _NOTICE:
            return False
    return True


def reads_by_name(tree):
    """{name: True when every read of it in this module only decides a warning, else False}."""
    warn_only_tests = set()
    reads = []  # (name, node id) in walk order; one walk of the module (a wheel has thousands)
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and not node.orelse and _only_notices(node.body):
            for inner in ast.walk(node.test):
                warn_only_tests.add(id(inner))
        name = read_of(node)
        if name:
            reads.append((name, id(node)))
    found = {}
    for name, node_id in reads:
        found[name] = found.get(name, True) and node_id in warn_only_tests
    return found
