"""The boundaries: parsers and the remote layer run without the TUI; pure parsers without I/O
libraries."""

from __future__ import annotations

import json
import pkgutil
import subprocess
import sys

import sglconsole.actions
import sglconsole.core
import sglconsole.remote


def modules(package) -> list[str]:
    return [f"{package.__name__}.{m.name}" for m in pkgutil.walk_packages(package.__path__)]


def imported_by(names: list[str]) -> set[str]:
    code = (
        "import importlib, json, sys\n"
        f"for n in {names!r}: importlib.import_module(n)\n"
        "print(json.dumps(sorted(sys.modules)))"
    )
    return set(
        json.loads(
            subprocess.run(
                [sys.executable, "-c", code], capture_output=True, text=True, check=True
            ).stdout
        )
    )


def test_core_remote_and_actions_never_import_textual():
    loaded = imported_by(
        modules(sglconsole.core) + modules(sglconsole.remote) + modules(sglconsole.actions)
    )
    assert not {m for m in loaded if m.split(".")[0] == "textual"}


def test_core_is_pure():
    loaded = imported_by(modules(sglconsole.core))
    assert not {m.split(".")[0] for m in loaded} & {
        "textual",
        "asyncssh",
        "httpx",
        "sglconsole.remote",
    }
    assert "sglconsole.remote" not in loaded and "sglconsole.actions" not in loaded
