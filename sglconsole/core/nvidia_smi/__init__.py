"""Pure parsing of ``nvidia-smi`` output (no I/O, stdlib only): the entry points.

Everything here takes text that ``nvidia-smi`` printed and returns plain data.
Nothing raises on arbitrary input: unparseable lines become ``None`` / are
skipped (and counted, for the stream assembler). Where each part is read:

* one CSV value (units, ``[N/A]`` markers): ``nvidia_smi_values``;
* ``--query-gpu`` lines: ``nvidia_smi_gpu``;
* ``--query-compute-apps`` lines: ``nvidia_smi_apps``;
* a failed run's output: ``nvidia_smi_errors``;
* the lines of a looping query: ``nvidia_smi_stream``.

The facts these rely on are in tests/fixtures/nvidia-smi/h200/README.md.
"""

from __future__ import annotations

from sglconsole.core.nvidia_smi.apps import COMPUTE_APPS_FIELDS, ComputeApp, parse_compute_apps
from sglconsole.core.nvidia_smi.errors import classify_nvidia_smi_error
from sglconsole.core.nvidia_smi.gpu import (
    GPU_QUERY_FIELDS,
    THROTTLE_REASONS,
    GpuSample,
    gpu_query_args,
    parse_gpu_csv,
    parse_gpu_line,
    throttle_reason_names,
)
from sglconsole.core.nvidia_smi.stream import GpuStreamAssembler

__all__ = [
    "GPU_QUERY_FIELDS",
    "COMPUTE_APPS_FIELDS",
    "THROTTLE_REASONS",
    "GpuSample",
    "ComputeApp",
    "GpuStreamAssembler",
    "throttle_reason_names",
    "parse_gpu_line",
    "parse_gpu_csv",
    "parse_compute_apps",
    "classify_nvidia_smi_error",
    "gpu_query_args",
]
