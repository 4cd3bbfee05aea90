"""JSON on stdout: every command's top-level JSON object carries `schema_version`.

RESULT_SCHEMA versions the results of probe and the other actions, diff, argdiff, bench and
log-stats (status has its own, state.json_view.SCHEMA_VERSION). Like status's, it grows its
minor part when a key is added and its major part only when a key changes meaning or goes.
"""

from __future__ import annotations

import json
from typing import Any

RESULT_SCHEMA = "1.0"
DIFF_SCHEMA = "1.1"  # 1.1: each server's report gains `container` (its image and run options)


def versioned(data: dict, version: str = RESULT_SCHEMA) -> dict:
    """`data` with `schema_version` first (a version already in it wins)."""
    return {"schema_version": version, **data}


def print_json(data: dict, *, indent: int | None = 2, version: str = RESULT_SCHEMA) -> None:
    print(json.dumps(versioned(data, version), indent=indent, default=str))


def dumps(data: Any) -> str:
    return json.dumps(data, indent=2, default=str)
