"""The architecture, enforced: the import layers and contracts in pyproject.toml
([tool.importlinter], checked by import-linter's `lint-imports`) and modules small enough to
read whole."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
PACKAGE = REPO / "sglconsole"
MAX_LINES = 400

# Modules allowed over MAX_LINES for now, each with its reason. Paths relative to the repository.
TOO_LONG_FOR_NOW: set[str] = set()  # none today; an entry must say why


def test_import_contracts_hold():
    # the console script next to this interpreter: the venv's, never one found on PATH
    lint_imports = Path(sys.executable).parent / "lint-imports"
    result = subprocess.run(
        [str(lint_imports), "--no-cache"], cwd=REPO, capture_output=True, text=True
    )
    assert result.returncode == 0, f"lint-imports failed:\n{result.stdout}\n{result.stderr}"


def test_no_module_is_too_long():
    # only Python modules: the data files (JSON tables, .tcss) are not read as code
    lengths = {
        path.relative_to(REPO).as_posix(): len(path.read_text(encoding="utf-8").splitlines())
        for path in PACKAGE.rglob("*.py")
    }
    too_long = {
        name: count
        for name, count in sorted(lengths.items())
        if count > MAX_LINES and name not in TOO_LONG_FOR_NOW
    }
    assert not too_long, f"split these by job (at most {MAX_LINES} lines each): {too_long}"


def test_the_allowlist_names_only_long_modules():
    # an entry whose module was split (or removed) must go, or it would hide the next long file
    stale = sorted(
        name
        for name in TOO_LONG_FOR_NOW
        if not (REPO / name).exists()
        or len((REPO / name).read_text(encoding="utf-8").splitlines()) <= MAX_LINES
    )
    assert not stale, f"remove from TOO_LONG_FOR_NOW: {stale}"


def test_the_code_keeps_the_project_style():
    """ruff's rules in pyproject.toml, the 100-column limit (E501) among them."""
    ruff = Path(sys.executable).parent / "ruff"
    for command in (["check", "."], ["format", "--check", "."]):
        result = subprocess.run([str(ruff), *command], cwd=REPO, capture_output=True, text=True)
        assert result.returncode == 0, f"ruff {' '.join(command)}:\n{result.stdout[-3000:]}"


def test_no_import_cycle_at_run_time():
    """No module reaches itself through what it imports when it runs: a cycle makes import
    order matter and leaves half-initialised modules (a package face re-exporting its own
    modules was one). Annotation-only imports (`if TYPE_CHECKING:`) run nothing."""
    import grimp

    graph = grimp.build_graph("sglconsole", exclude_type_checking_imports=True)
    cycles = set()
    for module in graph.modules:
        for imported in graph.find_modules_directly_imported_by(module):
            chain = graph.find_shortest_chain(importer=imported, imported=module)
            if chain:
                cycles.add(" -> ".join((module, *chain)))
    assert not cycles, "import cycles:\n" + "\n".join(sorted(cycles))


# one- and two-letter names that are interfaces users or files see, each with its reason
SHORT_NAMES_KEPT = {
    "n": "Distribution.n: a JSON key of the log statistics (`--json`)",
    "p5": "Distribution.p5: a JSON key of the log statistics, beside p50 and p95",
    "id": "a router worker's `id`: sglang-router's JSON key and the status schema's",
    "at": "ServerView.at: when a view was read, a field the recording format names",
    "UP": "Status.UP: the status users read, in JSON and in Prometheus",
    "of": "Distribution.of(values): a word, read as `Distribution.of(gaps)`",
    "ok": "a result's `ok`: the JSON key of action, bench and audit records and of the agents",
    "OK": "StageState.OK: a stage's state as the activity pane shows it",
    "up": "Scraped.up: Prometheus's own `up` series, by its name",
}
SHORT_NAMES_AT_MOST = 0.01  # of all bound names; was 5.9% before the second pass (#25)


def _bound_names(tree):
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            yield node.id, node.lineno
        elif isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store):
            yield node.attr, node.lineno
        elif isinstance(node, ast.arg):
            yield node.arg, node.lineno
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            yield node.name, node.lineno
        elif isinstance(node, ast.alias) and node.asname:
            yield node.asname, node.lineno
        elif isinstance(node, ast.ExceptHandler) and node.name:
            yield node.name, node.lineno


def test_names_are_words():
    """Loop variables, parameters and locals say what they hold: a one- or two-letter name
    is kept only where it is an interface (SHORT_NAMES_KEPT says why), and stays rare."""
    total, short = 0, []
    for path in sorted(PACKAGE.rglob("*.py")):
        where = path.relative_to(REPO).as_posix()
        for name, line in _bound_names(ast.parse(path.read_text(encoding="utf-8"))):
            if name == "_" or name.startswith("__"):
                continue
            total += 1
            if len(name) <= 2 and name not in SHORT_NAMES_KEPT:
                short.append(f"{where}:{line}: {name}")
    assert not short, "name these by what they hold:\n" + "\n".join(short)
    kept = sum(
        1
        for path in PACKAGE.rglob("*.py")
        for name, _ in _bound_names(ast.parse(path.read_text(encoding="utf-8")))
        if name in SHORT_NAMES_KEPT
    )
    assert kept <= SHORT_NAMES_AT_MOST * total, (kept, total)
