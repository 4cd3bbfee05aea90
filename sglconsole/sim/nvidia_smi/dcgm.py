"""A stand-in for NVIDIA's dcgm-exporter on a simulated host (`dcgm-exporter -a ADDR:PORT`, default
:9400): GET /metrics answers dcgm-exporter's default counters (its etc/default-counters.csv) with
its label set (gpu, UUID, pci_bus_id, device, modelName, Hostname, DCGM_FI_DRIVER_VERSION), from
the same readings the host's simulated nvidia-smi prints. Standard library only, like the rest of
the simulator: it shares no code with the console it tests."""

from __future__ import annotations

import socket
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from sglconsole.sim import gpustate
from sglconsole.sim.nvidia_smi.state import gpu_states

# (field, help as dcgm-exporter's default-counters.csv says it, reading)
COUNTERS = (
    ("DCGM_FI_DEV_SM_CLOCK", "SM clock frequency (in MHz).", "sm"),
    ("DCGM_FI_DEV_MEM_CLOCK", "Memory clock frequency (in MHz).", "mem_clk"),
    ("DCGM_FI_DEV_MEMORY_TEMP", "Memory temperature (in C).", "mem_temp"),
    ("DCGM_FI_DEV_GPU_TEMP", "GPU temperature (in C).", "temp"),
    ("DCGM_FI_DEV_POWER_USAGE", "Power draw (in W).", "power"),
    ("DCGM_FI_DEV_GPU_UTIL", "GPU utilization (in %).", "util"),
    ("DCGM_FI_DEV_MEM_COPY_UTIL", "Memory utilization (in %).", "mem_util"),
    ("DCGM_FI_DEV_FB_FREE", "Framebuffer memory free (in MiB).", "mem_free"),
    ("DCGM_FI_DEV_FB_USED", "Framebuffer memory used (in MiB).", "mem_used"),
)


def page(root: str, hostname: str) -> str:
    states = gpu_states(gpustate.load_host(root), gpustate.read_gpu_uses(root))
    lines = []
    for field, help_text, key in COUNTERS:
        lines += [f"# HELP {field} {help_text}", f"# TYPE {field} gauge"]
        for state in states:
            value = state.get(key)
            if value is None:
                continue
            labels = (
                f'gpu="{state["index"]}",UUID="{state["uuid"]}",'
                f'pci_bus_id="{state["bus_id"]}",device="nvidia{state["index"]}",'
                f'modelName="{state["name"]}",Hostname="{hostname}",'
                f'DCGM_FI_DRIVER_VERSION="{state["driver"]}"'
            )
            number = f"{value:.6f}" if isinstance(value, float) else str(int(value))
            lines.append(f"{field}{{{labels}}} {number}")
    return "\n".join(lines) + "\n"


def serve(root: str, address: str = ":9400") -> None:
    host, _, port = address.rpartition(":")
    hostname = socket.gethostname()

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self):  # noqa: N802 - http.server's name
            if self.path.split("?")[0] != "/metrics":
                self.send_error(404)
                return
            body = page(root, hostname).encode()
            self.send_response(200)
            self.send_header("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args):
            pass

    server = ThreadingHTTPServer((host or "0.0.0.0", int(port or 9400)), Handler)
    server.serve_forever()


def program(root: str) -> int:
    args = sys.argv[1:]
    address = ":9400"
    for flag in ("-a", "--address"):
        if flag in args and args.index(flag) + 1 < len(args):
            address = args[args.index(flag) + 1]
    try:
        serve(root, address)
    except KeyboardInterrupt:
        return 0
    return 0
