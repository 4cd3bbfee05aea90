"""Every bench script at its smallest size (`--smallest`: seconds, not minutes), writing into
tmp_path, never bench/results.json: it exits 0 and every key it promises (its PROMISES,
bench/checks.py) is there, non-null, with samples. A refactor that takes away what a bench's
measure hooks onto breaks this test with the bench's own line, `FAILED: <script>: <key>: <why>`.
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

from bench import (
    canary_cost,
    checks,
    containers_cost,
    exporter_cost,
    idle_cost,
    parser_bench,
    precursors_cost,
    prom_scale,
    router_restore,
    router_view,
)
from bench import run as run_bench
from bench.sglang_regex import regex_python
from sglconsole.sim.fleet import engines
from tests.prometheus import NO_PROMETHEUS

pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parents[2]
NO_REGEX = "the real-SGLang venv is not built (tools/real_sglang_venv.sh): no regex to compare"
NO_ROUTER = "sglang-router is not installed (pip install sglang-router)"
HAS_REGEX = regex_python() is not None
HAS_ROUTER = importlib.util.find_spec("sglang_router") is not None
HAS_PROMETHEUS = shutil.which("prometheus") is not None


# script -> its arguments past `--smallest`; run.py in a lane of its own, the others one after
# another beside it: the whole smoke test takes about as long as run.py alone (~3 min, 2 cores)
SCRIPTS = {
    "run.py": () if HAS_REGEX else ("--skip-parser",),  # parser_bench's own test says why
    "parser_bench.py": ("--json",),
    "prom_scale.py": (),
    "exporter_cost.py": (),
    "canary_cost.py": (),
    "idle_cost.py": (),
    "router_restore.py": (),
    "router_restore.py:smg": ("--router", "smg"),  # the same bench through the SMG gateway
    "router_view.py": (),
    "precursors_cost.py": (),
    "containers_cost.py": (),
}
CAN_RUN = {  # what a bench needs that this machine may lack: its test skips, saying why
    "parser_bench.py": HAS_REGEX,
    "prom_scale.py": HAS_PROMETHEUS,
    "router_restore.py": HAS_ROUTER,
    "router_restore.py:smg": router_restore.SMG_PYTHON.exists(),
    "router_view.py": HAS_ROUTER,
    "containers_cost.py": engines.unavailable(engines.DOCKER) is None,
}
LANES = (("run.py",), tuple(name for name in SCRIPTS if name != "run.py"))
TIMEOUT_S = 420


class Benches:
    """The benches the selected tests need, started at once in their lanes; `result` waits."""

    def __init__(self, wanted: set[str], workdir: Path):
        self.workdir = workdir
        self.done: dict[str, tuple[subprocess.CompletedProcess, float]] = {}
        self.ready = {name: threading.Event() for name in wanted}
        for lane in LANES:
            mine = [name for name in lane if name in wanted]
            threading.Thread(target=self._lane, args=(mine,), daemon=True).start()

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
    """Only the benches of the tests selected, and of those only what this machine can run."""
    here = request.module.__name__
    selected = {
        getattr(item.function, "bench", None)
        for item in request.session.items
        if getattr(getattr(item, "module", None), "__name__", None) == here
    }
    wanted = {script for script in selected if script and CAN_RUN.get(script, True)}
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


@bench("run.py")
def test_run_measures_every_promise(benches):
    """The fleet bench: CPU phases, freshness (monitor and on screen), cold start, memory,
    restore's overhead; the parser against SGLang's regex where the real-SGLang venv is."""
    settings = run_bench.arguments(["--smallest", *SCRIPTS["run.py"]])
    broken = unkept(benches.result("run.py"), run_bench.promised(settings), vars(settings))
    assert not broken, "\n".join(broken)


@bench("parser_bench.py")
def test_parser_bench_measures_every_promise(benches):
    if not HAS_REGEX:
        pytest.skip(NO_REGEX)
    broken = unkept(benches.result("parser_bench.py"), parser_bench.PROMISES)
    assert not broken, "\n".join(broken)


@bench("prom_scale.py")
def test_prom_scale_measures_every_promise(benches):
    if not HAS_PROMETHEUS:
        pytest.skip(NO_PROMETHEUS)
    broken = unkept(benches.result("prom_scale.py"), prom_scale.PROMISES, {"detail": "prom_scale"})
    assert not broken, "\n".join(broken)


@bench("exporter_cost.py")
def test_exporter_cost_measures_every_promise(benches):
    broken = unkept(benches.result("exporter_cost.py"), exporter_cost.PROMISES)
    assert not broken, "\n".join(broken)


@bench("canary_cost.py")
def test_canary_cost_measures_every_promise(benches):
    broken = unkept(benches.result("canary_cost.py"), canary_cost.PROMISES)
    assert not broken, "\n".join(broken)


@bench("idle_cost.py")
def test_idle_cost_measures_every_promise(benches):
    broken = unkept(benches.result("idle_cost.py"), idle_cost.PROMISES)
    assert not broken, "\n".join(broken)


@bench("router_restore.py")
def test_router_restore_measures_every_promise(benches):
    if not HAS_ROUTER:
        pytest.skip(NO_ROUTER)
    broken = unkept(benches.result("router_restore.py"), router_restore.PROMISES)
    assert not broken, "\n".join(broken)


@bench("router_restore.py:smg")
def test_router_restore_through_the_smg_gateway_measures_every_promise(benches):
    if not router_restore.SMG_PYTHON.exists():
        pytest.skip(router_restore.NO_SMG)
    measured = benches.result("router_restore.py:smg")
    broken = unkept(measured, router_restore.PROMISES_SMG)
    assert not broken, "\n".join(broken)
    assert measured["router_restore_smg_failed"] == 0, measured["router_restore_smg_detail"]


@bench("router_view.py")
def test_router_view_measures_every_promise(benches):
    if not HAS_ROUTER:
        pytest.skip(NO_ROUTER)
    broken = unkept(benches.result("router_view.py"), router_view.PROMISES)
    assert not broken, "\n".join(broken)


@bench("precursors_cost.py")
def test_precursors_cost_measures_every_promise(benches):
    broken = unkept(benches.result("precursors_cost.py"), precursors_cost.PROMISES)
    assert not broken, "\n".join(broken)


@bench("containers_cost.py")
def test_containers_cost_measures_every_promise(benches):
    if engines.unavailable(engines.DOCKER):
        pytest.skip(f"no Docker here: {engines.unavailable(engines.DOCKER)}")
    broken = unkept(benches.result("containers_cost.py"), containers_cost.PROMISES)
    assert not broken, "\n".join(broken)


def test_every_bench_script_is_smoked():
    """A new bench script gets a smoke test here (or is a helper the benches use, or a tool that
    measures nothing: readme_figures reads results.json, tests/test_bench_figures.py tests it)."""
    helpers = {"__init__", "checks", "cpu", "freshness", "phases", "restore_overhead"}
    helpers |= {"results_file", "sglang_regex", "sglang_target", "worker", "readme_figures"}
    benches = {path.stem for path in (REPO / "bench").glob("*.py")} - helpers
    tested = {"run", "parser_bench", "prom_scale", "exporter_cost", "idle_cost"}
    tested |= {"router_restore", "router_view", "canary_cost", "precursors_cost"}
    tested |= {"containers_cost"}
    assert benches == tested
    for name in benches:  # each declares what it promises and runs at its smallest size
        module = importlib.import_module(f"bench.{name}")
        assert module.PROMISES and module.SMALLEST, name
