"""What a SGLang version serves and logs, read from its generated table.

The tables in versions/ come from SGLang's own source of each version
(tools/gen_sim_version_table.py): HTTP routes and their deprecation
warnings, the fields of the scheduler's batch lines, the startup milestone
wording. The simulator asks these instead of comparing version numbers.
Stdlib only: simulated processes import this.
"""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path

from sglconsole.sim.flagtable import version_tuple

VERSIONS_DIR = Path(__file__).with_name("versions")


def _tables() -> list[Path]:
    return sorted(
        VERSIONS_DIR.glob("sglang-*.json"),
        key=lambda path: version_tuple(path.stem.removeprefix("sglang-")),
    )


def newest() -> str:
    return _tables()[-1].stem.removeprefix("sglang-")


@cache
def load(version: str) -> dict:
    """The table for `version`, or the newest one not newer than it (else the oldest)."""
    tables = _tables()
    older = [
        path
        for path in tables
        if version_tuple(path.stem.removeprefix("sglang-")) <= version_tuple(version)
    ]
    return json.loads((older or tables)[-1].read_text())


def routes(version: str) -> list[dict]:
    return load(version)["routes"]


def has_route(version: str, path: str) -> bool:
    return any(route["path"] == path for route in routes(version))


def startup(version: str, milestone: str) -> str | None:
    """The message template of a startup milestone (None: this version does not log it)."""
    return load(version)["startup"].get(milestone)


def batch_fields(version: str, kind: str) -> list[dict]:
    """The labelled fields of a "Decode batch" / "Prefill batch" line, in SGLang's order."""
    return load(version)["log"][kind]
