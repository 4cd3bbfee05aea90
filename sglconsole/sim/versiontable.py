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

from sglconsole.sim.flagtable import pick, version_tuple

VERSIONS_DIR = Path(__file__).with_name("versions")


def _tables() -> list[Path]:
    return sorted(
        VERSIONS_DIR.glob("sglang-*.json"),
        key=lambda path: version_tuple(path.stem.removeprefix("sglang-")),
    )


def newest() -> str:
    return _tables()[-1].stem.removeprefix("sglang-")


def available_versions() -> list[str]:
    return [path.stem.removeprefix("sglang-") for path in _tables()]


@cache
def load(version: str) -> dict:
    """The table for `version`: its own; newer than the newest: the newest (note() says so);
    older than the oldest: ValueError (flagtable.pick)."""
    chosen, _ = pick(version, available_versions(), "version table")
    return json.loads((VERSIONS_DIR / f"sglang-{chosen}.json").read_text())


def note(version: str) -> str | None:
    return pick(version, available_versions(), "version table")[1]


def routes(version: str) -> list[dict]:
    return load(version)["routes"]


def startup(version: str, milestone: str) -> str | None:
    """The message template of a startup milestone (None: this version does not log it)."""
    return load(version)["startup"].get(milestone)


def batch_fields(version: str, kind: str) -> list[dict]:
    """The labelled fields of a "Decode batch" / "Prefill batch" line, in SGLang's order."""
    return load(version)["log"][kind]


def runtime_mode(version: str, name: str) -> str | None:
    """A process-model switch of the release (`rust_server`: its environment variable;
    `weight_cache_daemon`: the daemon's module), None where the release has none."""
    return (load(version).get("runtime_modes") or {}).get(name)
