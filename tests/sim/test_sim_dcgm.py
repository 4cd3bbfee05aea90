"""The simulator's dcgm-exporter: its default counters with its label set, from the same
readings as the host's nvidia-smi."""

from __future__ import annotations

import os

from prometheus_client.parser import text_string_to_metric_families

from sglconsole.sim import gpustate
from sglconsole.sim.nvidia_smi.dcgm import page
from sglconsole.sim.nvidia_smi.state import gpu_states

# dcgm-exporter 3.x/4.x labels every device series with these (a scrape adds instance and job)
LABELS = {"gpu", "UUID", "pci_bus_id", "device", "modelName", "Hostname", "DCGM_FI_DRIVER_VERSION"}


def test_the_page_is_dcgm_exporters_shape(tmp_path):
    root = tmp_path / "h"
    gpustate.write_host(root, gpu_model="H200", gpu_count=2, uuid_seed="h")
    gpustate.register_gpu_use(root, os.getpid(), [1], 120_000, util=97)
    families = {f.name: f for f in text_string_to_metric_families(page(str(root), "gpu-node-7"))}
    for name in ("GPU_UTIL", "FB_USED", "FB_FREE", "GPU_TEMP", "POWER_USAGE"):
        family = families[f"DCGM_FI_DEV_{name}"]
        assert family.type == "gauge" and family.documentation
        assert [s.labels["gpu"] for s in family.samples] == ["0", "1"]
        assert all(set(s.labels) == LABELS for s in family.samples)
    used = {s.labels["gpu"]: s.value for s in families["DCGM_FI_DEV_FB_USED"].samples}
    states = gpu_states(gpustate.load_host(root), gpustate.read_gpu_uses(root))
    assert used == {str(s["index"]): s["mem_used"] for s in states}
    assert used["1"] > 120_000 > used["0"]
    first = families["DCGM_FI_DEV_GPU_UTIL"].samples[0].labels
    assert first["modelName"] == states[0]["name"] and first["Hostname"] == "gpu-node-7"
    assert first["UUID"] == states[0]["uuid"] and first["device"] == "nvidia0"
