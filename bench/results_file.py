"""bench/results.json, read and written the same way by every bench script: each one updates
its own keys and keeps the others'.

Every write also says where the keys it changed come from: results["provenance"][KEY] is the
record of the run that last wrote KEY (`record()`: the commit, whether the work tree had
uncommitted changes, when, the machine's cores and load average, the command). A key written
before these records existed gets what git can tell about it, and nothing more:
{"recorded_in": the commit of bench/results.json that brought that very value into the file (the
earliest holding it without a break), "committed_at": that commit's date} (`backfill`).

    python bench/results_file.py [FILE]   # backfills the keys of FILE that have no record
"""

from __future__ import annotations

import datetime
import json
import os
import subprocess
import sys
from collections.abc import Iterable
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
RESULTS = REPO / "bench" / "results.json"
PROVENANCE = "provenance"
"""The top-level key of the records, kept last in the file, beside the figures."""


def load(path: Path) -> dict:
    """What the file holds ({} when it is missing or not JSON: a first run starts it)."""
    try:
        return json.loads(path.read_text())
    except (OSError, ValueError):
        return {}


def save(
    path: Path, results: dict, measured: Iterable[str] = (), stamp: dict | None = None
) -> None:
    """Writes RESULTS. The keys in MEASURED, and every key whose value differs from the file's,
    get STAMP (default: `record()` of this run) as their provenance; the other keys keep theirs;
    a key with none yet gets what git knows (`backfill`)."""
    before = load(path)
    provenance = dict(results.get(PROVENANCE) or before.get(PROVENANCE) or {})
    # as the file will hold them (tuples become lists), to compare with what it holds
    figures = {key: value for key, value in results.items() if key != PROVENANCE}
    figures = json.loads(json.dumps(figures))
    changed = set(measured) | {key for key, value in figures.items() if before.get(key) != value}
    if changed:
        stamp = stamp if stamp is not None else record(path)
        provenance.update({key: stamp for key in changed if key in figures})
    provenance = {key: provenance[key] for key in figures if key in provenance}
    unknown = [key for key in figures if key not in provenance]
    if unknown:
        provenance.update(recorded_in({key: figures[key] for key in unknown}, history(path)))
    results.clear()
    results.update(figures)
    results[PROVENANCE] = {key: provenance[key] for key in figures if key in provenance}
    path.write_text(json.dumps(results, indent=2) + "\n")


def merge(path: Path, measured: dict, stamp: dict | None = None) -> dict:
    """The file with MEASURED's keys replaced (and stamped), written back; returns the whole."""
    results = load(path)
    results.update(measured)
    save(path, results, measured, stamp)
    return results


def record(path: Path = RESULTS) -> dict:
    """This run's provenance: the code's commit, whether the work tree differed from it (the
    results file itself not counted), when (UTC), the machine and its load, and the command."""
    cores = os.cpu_count()
    return {
        "commit": _git("rev-parse", "HEAD"),
        "dirty": _dirty(path),
        "at": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
        "machine": {"cores": cores, "loadavg": [round(load, 2) for load in os.getloadavg()]},
        "command": list(sys.argv),
    }


def _git(*args: str, cwd: Path = REPO) -> str | None:
    try:
        done = subprocess.run(
            ["git", *args], cwd=cwd, capture_output=True, text=True, timeout=30, check=True
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return done.stdout.strip()


def _dirty(path: Path, repo: Path = REPO) -> bool | None:
    """Uncommitted changes in the work tree (untracked files included), the results file not
    counted: a second bench run before a commit measures the same code. None: git did not say."""
    status = _git("status", "--porcelain", cwd=repo)
    if status is None:
        return None
    try:
        own = path.resolve().relative_to(repo.resolve()).as_posix()
    except ValueError:
        own = None
    # each line is "XY NAME"; _git strips the output, so the first line may have lost X's space
    changed = [line.split(maxsplit=1)[-1] for line in status.splitlines() if line.strip()]
    return any(name != own for name in changed)


def history(path: Path) -> list[tuple[str, str, dict, list[str]]]:
    """(commit, commit date, the file's JSON, parents) of each commit that changed PATH, newest
    first, the parents among those commits (git's simplified history of the file); [] where git
    has none (a file outside any repository, or never committed)."""
    where = path.resolve().parent
    log = _git("log", "--parents", "--format=%H %cI %P", "--", path.name, cwd=where)
    found = []
    for line in (log or "").splitlines():
        commit, date, *parents = line.split()
        text = _git("show", f"{commit}:./{path.name}", cwd=where)
        try:
            found.append((commit, date, json.loads(text or ""), parents))
        except ValueError:
            continue
    return found


def recorded_in(figures: dict, commits: list[tuple[str, str, dict, list[str]]]) -> dict:
    """For each of FIGURES (key: its value now) the commit that wrote that very value: from the
    newest of COMMITS (which must hold it: else it was written since, and gets no record) back
    through the parents that hold it too, to one whose parents do not."""
    by_commit = {commit: (date, snapshot, parents) for commit, date, snapshot, parents in commits}
    found = {}
    for key, value in figures.items():
        commit = commits[0][0] if commits else None
        if commit is None or by_commit[commit][1].get(key, _ABSENT) != value:
            continue
        while True:
            holding = [
                parent
                for parent in by_commit[commit][2]
                if parent in by_commit and by_commit[parent][1].get(key, _ABSENT) == value
            ]
            if not holding:
                break
            commit = holding[0]
        found[key] = {"recorded_in": commit, "committed_at": by_commit[commit][0]}
    return found


_ABSENT = object()


def backfill(path: Path) -> dict:
    """Writes PATH back unchanged but for records for its keys that have none."""
    results = load(path)
    save(path, results)
    return results[PROVENANCE]


if __name__ == "__main__":
    target = Path(sys.argv[1]) if len(sys.argv) > 1 else RESULTS
    print(json.dumps(backfill(target), indent=2))
