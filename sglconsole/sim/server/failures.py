"""How the simulated server fails, in SGLang's (and PyTorch's) own words."""

from __future__ import annotations

_TRACEBACK = "Traceback (most recent call last):"
_SCHEDULER_FRAME = '  File "sglang/srt/managers/scheduler.py", line 2891, in run_scheduler_process'

#: the scheduler's crash while serving: its last frame and the error, on stderr
SCHEDULER_CRASH = (
    '  File "/usr/lib/python3/dist-packages/sglang/srt/managers/scheduler.py", line 2891, '
    "in run_scheduler_process",
    "RuntimeError: NCCL error in: ../torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:1970, "
    "unhandled cuda error",
)


class StartupFailed(Exception):
    def __init__(self, lines: list[str], code: int = 1):
        self.lines = lines
        self.code = code


def invalid_device() -> list[str]:
    """A GPU index the host does not have (CUDA_VISIBLE_DEVICES, --tp-size)."""
    return [
        _TRACEBACK,
        _SCHEDULER_FRAME,
        "torch.AcceleratorError: CUDA error: invalid device ordinal",
        "CUDA kernel errors might be asynchronously reported at some other API call, "
        "so the stacktrace below might be incorrect.",
    ]


def out_of_memory(needed_gb: float, gpu: int, total_gb: float, free_gb: float) -> list[str]:
    return [
        _TRACEBACK,
        '  File "sglang/srt/model_executor/model_runner.py", line 412, in init_memory_pool',
        f"torch.OutOfMemoryError: CUDA out of memory. Tried to allocate {needed_gb:.2f} GiB. "
        f"GPU {gpu} has a total capacity of {total_gb:.2f} GiB of which "
        f"{max(free_gb, 0):.2f} GiB is free. Including non-PyTorch memory, this "
        "process has 0.50 GiB memory in use. Of the allocated memory 0.00 GiB is allocated "
        "by PyTorch, and 0 bytes is reserved by PyTorch but unallocated. If reserved but "
        "unallocated memory is large try setting "
        "PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True to avoid fragmentation.  "
        "See documentation for Memory Management  "
        "(https://docs.pytorch.org/docs/stable/notes/cuda.html"
        "#optimizing-memory-usage-with-pytorch-cuda-alloc-conf)",
    ]


def port_in_use(errno: int | None, host: str, port: int) -> list[str]:
    return [
        f"ERROR:    [Errno {errno}] error while attempting to bind on address "
        f"('{host}', {port}): address already in use"
    ]


def missing_model(path: str) -> list[str]:
    return [
        _TRACEBACK,
        '  File "sglang/srt/utils/hf_transformers_utils.py", line 310, in get_config',
        f"OSError: Can't load the configuration of '{path}'. If you were trying to load it "
        "from 'https://huggingface.co/models', make sure you don't have a local directory "
        f"with the same name. Otherwise, make sure '{path}' is the correct path to a "
        "directory containing a config.json file",
    ]
