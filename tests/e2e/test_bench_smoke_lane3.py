"""The bench smoke tests' third lane (~2.5 min): the Prometheus, exporter, canary and router
restore benches, one after another (tests/e2e/bench_smoke.py says why three lanes)."""

from __future__ import annotations

import pytest

from bench import canary_cost, exporter_cost, prom_scale, router_restore
from tests.e2e.bench_smoke import (  # noqa: F401  (benches: the fixture)
    HAS_PROMETHEUS,
    HAS_ROUTER,
    NO_ROUTER,
    bench,
    benches,
    unkept,
)
from tests.prometheus import NO_PROMETHEUS

pytestmark = [pytest.mark.slow, pytest.mark.long_file(150)]  # seconds, about


@bench("prom_scale.py")
def test_prom_scale_measures_every_promise(benches):  # noqa: F811
    if not HAS_PROMETHEUS:
        pytest.skip(NO_PROMETHEUS)
    results = benches.result("prom_scale.py")
    broken = unkept(results, prom_scale.PROMISES, {"detail": "prom_scale"})
    assert not broken, "\n".join(broken)
    detail = results["prom_scale"]  # 5 hosts x 2 servers at --smallest
    assert detail["servers"] == 10 and detail["series"] > 10 * 300  # the real page's shape
    assert 0 < results["prom_console_cpu_cores_1000"] == detail["console_cores"] < 1
    assert detail["prometheus_cores"] > 0
    fresh = detail["freshness"]
    assert fresh["n"] >= 2 and fresh["lost"] == 0, fresh  # each flip showed
    assert 0 < results["prom_freshness_p95_s"] == fresh["p95_s"] < 10
    assert detail["machine_after"]["loadavg_1_5_15"]


@bench("exporter_cost.py")
def test_exporter_cost_measures_every_promise(benches):  # noqa: F811
    results = benches.result("exporter_cost.py")
    broken = unkept(results, exporter_cost.PROMISES)
    assert not broken, "\n".join(broken)
    detail = results["exporter_cost"]  # 2 hosts x 1 server at --smallest
    assert detail["exporter"]["hosts_reachable_at_end"] == 2, detail  # it watched them all
    assert detail["exporter"]["scrapes"] >= 3
    assert (
        0 < results["exporter_cpu_per_host_minute"] == detail["exporter"]["cpu_s_per_host_minute"]
    )
    assert detail["monitor"]["cpu_s"] > 0 and detail["exporter_vs_monitor"] > 0


@bench("canary_cost.py")
def test_canary_cost_measures_every_promise(benches):  # noqa: F811
    broken = unkept(benches.result("canary_cost.py"), canary_cost.PROMISES)
    assert not broken, "\n".join(broken)


@bench("router_restore.py")
def test_router_restore_measures_every_promise(benches):  # noqa: F811
    if not HAS_ROUTER:
        pytest.skip(NO_ROUTER)
    broken = unkept(benches.result("router_restore.py"), router_restore.PROMISES)
    assert not broken, "\n".join(broken)


@bench("router_restore.py:smg")
def test_router_restore_through_the_smg_gateway_measures_every_promise(benches):  # noqa: F811
    if not router_restore.SMG_PYTHON.exists():
        pytest.skip(router_restore.NO_SMG)
    measured = benches.result("router_restore.py:smg")
    broken = unkept(measured, router_restore.PROMISES_SMG)
    assert not broken, "\n".join(broken)
    assert measured["router_restore_smg_failed"] == 0, measured["router_restore_smg_detail"]
