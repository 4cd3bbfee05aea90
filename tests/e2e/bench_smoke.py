"""What the bench smoke tests share: every bench script at its smallest size (`--smallest`:
seconds, not minutes), writing into tmp_path, never bench/results.json: it exits 0 and every key
it promises (its PROMISES, bench/checks.py) is there, non-null, with samples. A refactor that
takes away what a bench's measure hooks onto breaks its test with the bench's own line,
`FAILED: <script>: <key>: <why>`.

The scripts run in three lanes, one test file each (test_bench_smoke.py: run.py, ~1 min alone;
test_bench_smoke_lane2.py and test_bench_smoke_lane3.py: the others, ~2.5 min each), so that
xdist (--dist loadfile: a file runs whole on one worker) spreads them over three workers: in one
file they were ~5 min of one worker's time, the suite's critical path.
"""

from __future__ import annotations

import importlib.util
import json
import shutil
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from bench import checks, router_restore
from bench.sglang_regex import regex_python
from sglconsole.sim.fleet import engines

REPO = Path(__file__).resolve().parents[2]
NO_REGEX = "the real-SGLang venv is not built (tools/real_sglang_venv.sh): no regex to compare"
NO_ROUTER = "sglang-router is not installed (pip install sglang-router)"
HAS_REGEX = regex_python() is not None
HAS_ROUTER = importlib.util.find_spec("sglang_router") is not None
HAS_PROMETHEUS = shutil.which("prometheus") is not None

# script -> its arguments past `--smallest` (seconds at --smallest, 2 cores, little else running)
SCRIPTS = {
    "run.py": () if HAS_REGEX else ("--skip-parser",),  # ~55 s; parser_bench's test says why
    "parser_bench.py": ("--json",),  # ~7 s
    "prom_scale.py": (),  # ~33 s
    "exporter_cost.py": (),  # ~30 s
    "canary_cost.py": (),  # ~30 s
    "idle_cost.py": (),  # ~46 s
    "router_restore.py": (),  # ~20 s
    "router_restore.py:smg": ("--router", "smg"),  # ~32 s: the same bench through SMG
    "router_view.py": (),  # ~8 s
    "precursors_cost.py": (),  # ~37 s
    "containers_cost.py": (),  # ~45 s
}
CAN_RUN = {  # what a bench needs that this machine may lack: its test skips, saying why
    "parser_bench.py": HAS_REGEX,
    "prom_scale.py": HAS_PROMETHEUS,
    "router_restore.py": HAS_ROUTER,
    "router_restore.py:smg": router_restore.SMG_PYTHON.exists(),
    "router_view.py": HAS_ROUTER,
    "containers_cost.py": engines.unavailable(engines.DOCKER) is None,
}
TIMEOUT_S = 420  # one script's run; run.py's test waits up to RUN_TIMEOUT_S (its own marker)
RUN_TIMEOUT_S = 480


class Benches:
    """The benches of one file's selected tests, started at once one after another in a thread
    of their own (the file's lane); `result` waits for one."""

    def __init__(self, wanted: list[str], workdir: Path):
        self.workdir = workdir
        self.done: dict[str, tuple[subprocess.CompletedProcess, float]] = {}
        self.ready = {name: threading.Event() for name in wanted}
        threading.Thread(target=self._lane, args=(wanted,), daemon=True).start()

    def out(self, script: str) -> Path:
        return self.workdir / f"{script.replace('.py', '').replace(':', '-')}.json"

    def _lane(self, scripts: list[str]) -> None:
        for script in scripts:
            file = script.partition(":")[0]  # SCRIPT:VARIANT: the same file, other arguments
            command = [sys.executable, f"bench/{file}", "--smallest", *SCRIPTS[script]]
            if script != "parser_bench.py":  # which prints what it measured (--json)
                self.out(script).write_text(json.dumps({"kept": 1}))
                command += ["--out", str(self.out(script))]
            began = time.monotonic()
            try:
                done = subprocess.run(
                    command,
                    cwd=REPO,
                    capture_output=True,
                    text=True,
                    timeout=TIMEOUT_S,
                )
            except subprocess.TimeoutExpired as exc:
                done = subprocess.CompletedProcess(exc.cmd, -9, "", f"timed out: {exc}")
            self.done[script] = (done, time.monotonic() - began)
            self.ready[script].set()

    def result(self, script: str) -> dict:
        """What SCRIPT measured (its --out, or parser_bench's --json), once it exited 0."""
        assert self.ready[script].wait(TIMEOUT_S * 2), f"{script} never finished"
        done, took = self.done[script]
        print(f"{script} --smallest: {took:.0f} s")
        said = [line for line in done.stderr.splitlines() if line.startswith("FAILED: ")]
        if done.returncode != 0 or said:  # the bench's own FAILED lines, else what it printed
            tail = f"exit {done.returncode}\n{done.stdout[-2000:]}{done.stderr[-3000:]}"
            pytest.fail("\n".join(said) or tail, pytrace=False)
        if script == "parser_bench.py":
            return json.loads(done.stdout)
        results = json.loads(self.out(script).read_text())
        assert results["kept"] == 1  # read, modify, write: the other keys stay
        return results


@pytest.fixture(scope="module")
def benches(request, tmp_path_factory) -> Benches:
    """Only the benches of the file's tests selected, and of those only what this machine can
    run, in SCRIPTS' order."""
    here = request.module.__name__
    selected = {
        getattr(item.function, "bench", None)
        for item in request.session.items
        if getattr(getattr(item, "module", None), "__name__", None) == here
    }
    wanted = [s for s in SCRIPTS if s in selected and CAN_RUN.get(s, True)]
    return Benches(wanted, tmp_path_factory.mktemp("bench-smoke"))


def bench(script: str):
    """Marks a test as the one that judges SCRIPT's smallest run."""

    def mark(function):
        function.bench = script
        return function

    return mark


def unkept(measured: dict, promises: checks.Promises, fields: dict | None = None) -> list[str]:
    """Every promise the bench exited 0 without keeping (a bench that no longer checks its own),
    and every promised key it wrote as null or not at all: one line each."""
    broken = [f"{key}: {why}" for key, why in checks.problems(measured, promises, fields)]
    return broken + [
        f"{key}: missing or null"
        for key in promises
        if checks.lookup(measured, key.format(**(fields or {}))) is None
    ]
