"""The architecture, enforced: the import layers and contracts in pyproject.toml
([tool.importlinter], checked by import-linter's `lint-imports`) and modules small enough to
read whole."""

from __future__ import annotations

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
