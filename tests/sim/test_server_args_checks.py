"""The simulated SGLang refuses what its release's ServerArgs refuses (generated from the
release's server_args.py): 0.5.11 stops a hybrid-mamba model launched with speculative decoding
and radix cache unless `--mamba-scheduler-strategy extra_buffer`, naming it; 0.5.9 takes the same
launch (it disabled radix cache quietly)."""

from __future__ import annotations

import time

import httpx

from sglconsole.sim.host.root import create_host
from tests.sim.test_sim_server import MODEL, Server, servers  # noqa: F401 - the fixture

SPEC = ["--speculative-algorithm", "NEXTN", "--speculative-num-steps", "3"]


def launch(tmp_path, version: str, *extra: str) -> Server:
    root = create_host(
        tmp_path / version,
        gpu_model="A6000",
        gpu_count=2,
        sglang_version=version,
        models=(MODEL,),
        sglang={"startup_s": 0.3},
    )
    return Server(root, ["--model-path", str(root / "models" / MODEL), "--tp-size", "2", *extra])


def serving(server: Server) -> dict:
    """/server_info once the server answers /health (0.5.9 and 0.5.11 have no /ready)."""
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        assert server.proc.poll() is None, server.text()[-2000:]
        try:
            if httpx.get(server.url + "/health", timeout=1).status_code == 200:
                return httpx.get(server.url + "/server_info", timeout=5).json()
        except httpx.HTTPError:
            pass
        time.sleep(0.1)
    raise AssertionError("not serving:\n" + server.text()[-2000:])


def test_0511_refuses_speculation_with_radix_cache_on_a_hybrid_model_without_extra_buffer(
    tmp_path,
    servers,  # noqa: F811
):
    refused = launch(tmp_path, "0.5.11", *SPEC)
    servers.append(refused)
    assert refused.proc.wait(10) == 1
    text = refused.text()
    assert "ValueError: Speculative decoding for Qwen3_5ForConditionalGeneration" in text
    remedy = "please use --mamba-scheduler-strategy extra_buffer and set SGLANG_ENABLE_SPEC_V2=1"
    assert remedy in text
    assert "server_args=" not in text  # ServerArgs raised before anything was logged

    taken = launch(tmp_path, "0.5.11", *SPEC, "--mamba-scheduler-strategy", "extra_buffer")
    servers.append(taken)
    assert serving(taken)["mamba_scheduler_strategy"] == "extra_buffer"


def test_0_5_9_takes_the_same_launch(tmp_path, servers):  # noqa: F811
    server = launch(tmp_path / "old", "0.5.9", *SPEC)
    servers.append(server)
    assert serving(server)["speculative_algorithm"] == "NEXTN"
