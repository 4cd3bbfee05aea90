"""Every Prometheus family a SGLang release declares, read from its source with ``ast``.

Used by tools/gen_sim_version_table.py (the ``metric_families`` key). For each
``Gauge`` / ``Counter`` / ``Histogram`` / ``Summary`` / ``GaugeHistogram`` named
``sglang:...`` it records the name, type, help text, the label names it declares
(``common_labels``: plus the collector's own label set, ``labelnames=list(labels
.keys()) + [...]``), constant buckets, the class or function that declares it
(``owner``), and who writes it (``written_by``: the methods of that class that touch
the attribute, each with the ``if`` test that guards the write, or null).

Prometheus' multiprocess mode (SGLang's) lists a family only once a value was
written, so which families a server serves follows from which of those methods
its run calls: the simulator decides that, this only reads the source.
"""

from __future__ import annotations

import ast
from pathlib import Path

KINDS = {
    "Gauge": "gauge",
    "Counter": "counter",
    "Histogram": "histogram",
    "Summary": "summary",
    "GaugeHistogram": "gauge",  # one gauge series per (gt, le] bucket
}


def _call_name(node: ast.Call) -> str:
    func = node.func
    return func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")


def _text(node: ast.expr | None) -> str | None:
    """A constant string, or the constant parts of an implicit / `+` concatenation."""
    if node is None:
        return None
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        left, right = _text(node.left), _text(node.right)
        return None if left is None or right is None else left + right
    if isinstance(node, ast.JoinedStr):
        return "".join(
            str(v.value) if isinstance(v, ast.Constant) else "{" + ast.unparse(v.value) + "}"
            for v in node.values
        )
    return None


def _labels(node: ast.expr | None) -> tuple[list[str], bool]:
    """(the constant label names, whether the collector's own labels come too)."""
    if node is None:
        return [], False
    names = [
        n.value for n in ast.walk(node) if isinstance(n, ast.Constant) and isinstance(n.value, str)
    ]
    common = not isinstance(node, (ast.List, ast.Tuple)) or any(
        not isinstance(element, ast.Constant) for element in node.elts
    )
    return names, common


def _buckets(node: ast.expr | None, constants: dict[str, ast.expr]) -> list[float] | None:
    """Constant bucket bounds, also through a module-level name (ROUTING_KEY_..._BOUNDS)."""
    if isinstance(node, ast.Name) and node.id in constants:
        node = constants[node.id]
    if isinstance(node, (ast.List, ast.Tuple)) and all(
        isinstance(e, ast.Constant) and isinstance(e.value, (int, float)) for e in node.elts
    ):
        return [e.value for e in node.elts]
    return None


def _parents(tree: ast.AST) -> dict[ast.AST, ast.AST]:
    return {child: node for node in ast.walk(tree) for child in ast.iter_child_nodes(node)}


def _writers(cls: ast.ClassDef, attr: str) -> list[dict]:
    """The methods (not __init__) of `cls` that touch `self.<attr>`, with their guard."""
    out: list[dict] = []

    def visit(node: ast.AST, method: str, guard: str | None) -> None:
        if (
            isinstance(node, ast.Attribute)
            and node.attr == attr
            and isinstance(node.value, ast.Name)
            and node.value.id == "self"
        ):
            entry = {"method": method, "guard": guard}
            if entry not in out:
                out.append(entry)
        for child in ast.iter_child_nodes(node):
            inner = guard
            if isinstance(node, ast.If) and child is not node.test:
                inner = ast.unparse(node.test)
            visit(child, method, inner)

    for item in cls.body:
        if isinstance(item, ast.FunctionDef) and item.name != "__init__":
            visit(item, item.name, None)
    return out


def _declarations(path: Path, rel: str):
    tree = ast.parse(path.read_text(encoding="utf-8"))
    parents = _parents(tree)
    constants = {
        stmt.targets[0].id: stmt.value
        for stmt in tree.body
        if isinstance(stmt, ast.Assign) and isinstance(stmt.targets[0], ast.Name)
    }
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call) or _call_name(node) not in KINDS:
            continue
        kw = {k.arg: k.value for k in node.keywords}
        name = _text(kw.get("name") or (node.args[0] if node.args else None))
        if not name or not name.startswith("sglang:") or "{" in name:
            continue
        owner, cls, function, guard = None, None, None, None
        attr = None
        parent = parents.get(node)
        if isinstance(parent, ast.Assign) and isinstance(parent.targets[0], ast.Attribute):
            attr = parent.targets[0].attr
        child = node
        while parent is not None:
            if isinstance(parent, ast.If) and guard is None and child is not parent.test:
                guard = ast.unparse(parent.test)
            if isinstance(parent, ast.FunctionDef) and function is None:
                function = parent
            if isinstance(parent, ast.ClassDef):
                cls = parent
                break
            child, parent = parent, parents.get(parent)
        owner = cls.name if cls is not None else (function.name if function else None)
        labels, common = _labels(kw.get("labelnames"))
        if cls is not None and attr is not None:
            written_by = _writers(cls, attr)
            declared_guard = guard if function is not None and function.name == "__init__" else None
        else:
            # declared where it is used (a middleware, a monitor thread): written by its owner
            written_by = [{"method": owner, "guard": guard}]
            declared_guard = None
        yield {
            "name": name,
            "type": KINDS[_call_name(node)],
            "help": _text(
                kw.get("documentation") or (node.args[1] if len(node.args) > 1 else None)
            ),
            "labels": labels,
            "common_labels": common,
            "buckets": _buckets(kw.get("buckets") or kw.get("bucket_bounds"), constants),
            "gauge_histogram": _call_name(node) == "GaugeHistogram",
            # a Gauge's multiprocess mode; "all" (its default) adds a `pid` label per process
            "multiprocess_mode": _text(kw.get("multiprocess_mode"))
            or ("all" if _call_name(node) == "Gauge" else None),
            "file": rel,
            "owner": owner,
            "declared_if": declared_guard,
            "written_by": written_by,
        }


def metric_families(pkg: Path) -> list[dict]:
    """Every `sglang:` family declared under srt/, first declaration wins, in source order."""
    out: dict[str, dict] = {}
    for path in sorted((pkg / "srt").rglob("*.py")):
        text = path.read_text(encoding="utf-8", errors="replace")
        if '"sglang:' not in text:
            continue
        rel = path.relative_to(pkg).as_posix()
        for family in _declarations(path, rel):
            out.setdefault(family["name"], family)
    return list(out.values())
