"""What tells the router generations apart and what the SMG gateway publishes per worker
(remote.router.gateway), read from what the real gateways answered: smg 1.13.0's and sglang-router
0.3.2's GET /workers rows and /metrics lines, captured from them in front of simulated servers."""

from __future__ import annotations

import pytest

from sglconsole.errors import RemoteError
from sglconsole.remote.router.gateway import (
    SGLANG_ROUTER,
    SMG,
    WorkerGauges,
    admin_token,
    generation_of,
    worker_gauges,
)

SMG_ROW = {  # smg 1.13.0, GET /workers (labels and models shortened)
    "id": "01a2481f-b82e-76d5-b94d-2416c6ef95ee",
    "model_id": "/srv/models/Qwen3-8B",
    "url": "http://127.0.0.1:30000",
    "models": [{"id": "/srv/models/Qwen3-8B", "context_length": 40960}],
    "worker_type": "regular",
    "connection_mode": "http",
    "runtime_type": "sglang",
    "labels": {"tp_size": "1"},
    "is_healthy": True,
    "status": "ready",
    "load": 0,
    "job_status": None,
}
ROUTER_ROW = {  # sglang-router 0.3.2, GET /workers
    "id": "fc613cd2-02f9-4f2d-86b7-53a4f57f973c",
    "url": "http://127.0.0.1:30001",
    "model_id": "/srv/models/Qwen3-8B",
    "priority": 50,
    "cost": 1.0,
    "worker_type": "regular",
    "is_healthy": True,
    "load": 0,
    "connection_mode": "HTTP",
    "metadata": {"tp_size": "1", "load_balance_method": "round_robin"},
    "disable_health_check": False,
}
METRICS = """\
# TYPE smg_worker_cb_state gauge
smg_worker_cb_state{worker="http://127.0.0.1:30000"} 0
smg_worker_cb_state{worker="http://127.0.0.1:30001"} 1
smg_worker_health{worker="http://127.0.0.1:30000"} 1
smg_worker_health{worker="http://127.0.0.1:30001"} 1
smg_worker_requests_active{worker="http://127.0.0.1:30000"} 2
smg_worker_requests_active{worker="http://127.0.0.1:30001"} 0
smg_worker_cb_consecutive_failures{worker="http://127.0.0.1:30001"} 5
smg_worker_requests_total{worker="http://127.0.0.1:30000",model="/srv/models/Qwen3-8B"} 16
smg_worker_requests_total{worker="http://127.0.0.1:30001",model="/srv/models/Qwen3-8B"} 12
smg_worker_cb_state{worker="http://127.0.0.1:30002"} -1
smg_worker_health{worker="http://127.0.0.1:30002"} -1
smg_http_requests_total{method="GET",path="/workers"} 2
"""


def test_the_generation_is_told_by_its_rows_and_unknown_without_any():
    assert generation_of([SMG_ROW]) == SMG
    assert generation_of([ROUTER_ROW]) == SGLANG_ROUTER
    assert generation_of([]) is None


def test_the_gateways_gauges_per_worker_and_a_released_one_is_unknown_never_zero():
    gauges = worker_gauges(METRICS)
    assert gauges["http://127.0.0.1:30000"] == WorkerGauges(
        healthy=True, breaker="closed", inflight=2, requests=16
    )
    assert gauges["http://127.0.0.1:30001"] == WorkerGauges(
        healthy=True, breaker="open", inflight=0, requests=12, failures=5
    )
    # -1: the gateway let go of the worker's series (metrics.rs): not closed, not healthy
    assert gauges["http://127.0.0.1:30002"] == WorkerGauges()
    # sglang's own sgl-model-gateway names them sgl_router_*, in-flight as inflight_requests
    older = worker_gauges(
        'sgl_router_worker_cb_state{worker="http://w:1"} 2\n'
        'sgl_router_worker_inflight_requests{worker="http://w:1"} 3\n'
    )
    assert older["http://w:1"] == WorkerGauges(breaker="half-open", inflight=3)


def test_the_admin_token_comes_from_the_environment_and_an_unset_one_names_only_the_variable(
    monkeypatch,
):
    monkeypatch.setenv("SMG_ADMIN_TOKEN", "s3cret")
    assert admin_token("front", "${SMG_ADMIN_TOKEN}") == "s3cret"
    assert admin_token("front", None) is None
    monkeypatch.delenv("SMG_ADMIN_TOKEN")
    with pytest.raises(RemoteError, match=r"\$\{SMG_ADMIN_TOKEN\} is not set") as unset:
        admin_token("front", "${SMG_ADMIN_TOKEN}")
    assert "s3cret" not in str(unset.value)
