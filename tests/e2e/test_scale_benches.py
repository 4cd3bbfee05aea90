"""bench/prom_scale.py and bench/exporter_cost.py end to end at a tiny size, so they cannot rot:
real Prometheus, real SSH, the numbers land in --out next to the keys already there."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.prometheus import NO_PROMETHEUS

pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parents[2]


def bench(script: str, out: Path, *args: str) -> dict:
    out.write_text(json.dumps({"kept": 1}))
    done = subprocess.run(
        [sys.executable, f"bench/{script}", *args, "--out", str(out)],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=240,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    results = json.loads(out.read_text())
    assert results["kept"] == 1  # read, modify, write
    return results


def test_prom_scale_measures_the_console_and_its_freshness(tmp_path):
    if shutil.which("prometheus") is None:
        pytest.skip(NO_PROMETHEUS)
    results = bench(
        "prom_scale.py",
        tmp_path / "results.json",
        *("--hosts", "5", "--servers", "2", "--seconds", "6", "--warmup", "4", "--scrape", "1"),
    )
    detail = results["prom_scale"]
    assert detail["servers"] == 10 and detail["series"] > 10 * 300  # the real page's shape
    assert 0 < results["prom_console_cpu_cores_1000"] == detail["console_cores"] < 1
    assert detail["prometheus_cores"] > 0
    fresh = detail["freshness"]
    assert fresh["n"] >= 2 and fresh["lost"] == 0, fresh  # each flip showed
    assert 0 < results["prom_freshness_p95_s"] == fresh["p95_s"] < 10
    assert detail["machine_after"]["loadavg_1_5_15"]


def test_exporter_cost_measures_the_exporter_next_to_the_monitor(tmp_path):
    results = bench(
        "exporter_cost.py",
        tmp_path / "results.json",
        *("--hosts", "2", "--servers", "1", "--seconds", "5", "--warmup", "6", "--scrape", "1"),
    )
    detail = results["exporter_cost"]
    assert detail["exporter"]["hosts_reachable_at_end"] == 2, detail  # it watched them all
    assert detail["exporter"]["scrapes"] >= 3
    assert (
        0 < results["exporter_cpu_per_host_minute"] == detail["exporter"]["cpu_s_per_host_minute"]
    )
    assert detail["monitor"]["cpu_s"] > 0 and detail["exporter_vs_monitor"] > 0
