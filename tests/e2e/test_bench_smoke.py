"""The bench smoke tests' first lane: bench/run.py at its smallest size, alone (~1 min: its
stages that can overlap run at once, `--at-once`; ~2.5 min one after another). The other benches
run beside it in test_bench_smoke_lane2.py and test_bench_smoke_lane3.py; tests/e2e/bench_smoke.py
says how.
"""

from __future__ import annotations

import importlib
import inspect
import sys

import pytest

from bench import run as run_bench
from tests.e2e import bench_smoke, test_bench_smoke_lane2, test_bench_smoke_lane3
from tests.e2e.bench_smoke import REPO, SCRIPTS, bench, benches, unkept  # noqa: F401  (fixture)

pytestmark = [pytest.mark.slow, pytest.mark.long_file(75)]  # seconds, about


@bench("run.py")
@pytest.mark.timeout(bench_smoke.RUN_TIMEOUT_S)
def test_run_measures_every_promise(benches):  # noqa: F811  (the fixture)
    """The fleet bench: CPU phases, freshness (monitor and on screen), cold start, memory,
    restore's overhead; the parser against SGLang's regex where the real-SGLang venv is."""
    settings = run_bench.arguments(["--smallest", *SCRIPTS["run.py"]])
    broken = unkept(benches.result("run.py"), run_bench.promised(settings), vars(settings))
    assert not broken, "\n".join(broken)


def test_every_bench_script_is_smoked():
    """A new bench script gets a smoke test in one of the lanes (or is a helper the benches use,
    or a tool that measures nothing: readme_figures reads results.json, tests/test_bench_figures.py
    tests it), and each script of SCRIPTS is judged by exactly one test."""
    helpers = {"__init__", "checks", "cpu", "freshness", "phases", "restore_overhead"}
    helpers |= {"results_file", "sglang_regex", "sglang_target", "worker", "readme_figures"}
    helpers |= {"loop_profile"}  # idle_cost.py --profile runs the console under it
    scripts = {path.stem for path in (REPO / "bench").glob("*.py")} - helpers
    tested = {"run", "parser_bench", "prom_scale", "exporter_cost", "idle_cost"}
    tested |= {"router_restore", "router_view", "canary_cost", "precursors_cost"}
    tested |= {"containers_cost"}
    assert scripts == tested
    for name in scripts:  # each declares what it promises and runs at its smallest size
        module = importlib.import_module(f"bench.{name}")
        assert module.PROMISES and module.SMALLEST, name
    lanes = (sys.modules[__name__], test_bench_smoke_lane2, test_bench_smoke_lane3)
    judged = [
        function.bench
        for lane in lanes
        for _, function in inspect.getmembers(lane, inspect.isfunction)
        if hasattr(function, "bench")
    ]
    assert sorted(judged) == sorted(SCRIPTS)
    assert {script.partition(":")[0].removesuffix(".py") for script in SCRIPTS} == tested
