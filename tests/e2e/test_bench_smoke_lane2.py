"""The bench smoke tests' second lane (~2.5 min): the container, idle, precursor and router-view
benches and the parser's, one after another (tests/e2e/bench_smoke.py says why three lanes)."""

from __future__ import annotations

import pytest

from bench import containers_cost, idle_cost, parser_bench, precursors_cost, router_view
from sglconsole.sim.fleet import engines
from tests.e2e.bench_smoke import (  # noqa: F401  (benches: the fixture)
    HAS_REGEX,
    HAS_ROUTER,
    NO_REGEX,
    NO_ROUTER,
    bench,
    benches,
    unkept,
)

pytestmark = [pytest.mark.slow, pytest.mark.long_file(150)]  # seconds, about


@bench("parser_bench.py")
def test_parser_bench_measures_every_promise(benches):  # noqa: F811
    if not HAS_REGEX:
        pytest.skip(NO_REGEX)
    broken = unkept(benches.result("parser_bench.py"), parser_bench.PROMISES)
    assert not broken, "\n".join(broken)


@bench("idle_cost.py")
def test_idle_cost_measures_every_promise(benches):  # noqa: F811
    broken = unkept(benches.result("idle_cost.py"), idle_cost.PROMISES)
    assert not broken, "\n".join(broken)


@bench("router_view.py")
def test_router_view_measures_every_promise(benches):  # noqa: F811
    if not HAS_ROUTER:
        pytest.skip(NO_ROUTER)
    broken = unkept(benches.result("router_view.py"), router_view.PROMISES)
    assert not broken, "\n".join(broken)


@bench("precursors_cost.py")
def test_precursors_cost_measures_every_promise(benches):  # noqa: F811
    broken = unkept(benches.result("precursors_cost.py"), precursors_cost.PROMISES)
    assert not broken, "\n".join(broken)


@bench("containers_cost.py")
def test_containers_cost_measures_every_promise(benches):  # noqa: F811
    if engines.unavailable(engines.DOCKER):
        pytest.skip(f"no Docker here: {engines.unavailable(engines.DOCKER)}")
    broken = unkept(benches.result("containers_cost.py"), containers_cost.PROMISES)
    assert not broken, "\n".join(broken)
