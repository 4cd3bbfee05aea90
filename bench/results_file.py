"""bench/results.json, read and written the same way by every bench script: each one updates
its own keys and keeps the others'."""

from __future__ import annotations

import json
from pathlib import Path


def load(path: Path) -> dict:
    """What the file holds ({} when it is missing or not JSON: a first run starts it)."""
    try:
        return json.loads(path.read_text())
    except (OSError, ValueError):
        return {}


def save(path: Path, results: dict) -> None:
    path.write_text(json.dumps(results, indent=2) + "\n")


def merge(path: Path, measured: dict) -> dict:
    """The file with MEASURED's keys replaced, written back; returns the whole."""
    results = load(path)
    results.update(measured)
    save(path, results)
    return results
