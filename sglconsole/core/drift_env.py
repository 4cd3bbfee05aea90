"""Which environment variables a drift comparison looks at, and which it shows apart (pure).

Tuning variables are compared; what an image bakes in is ambient (shown, never drift); build and
JIT-cache variables are their own group. What SGLang itself does with an SGLANG_* variable is
judged by its registry (core/env_registry.py)."""

from __future__ import annotations

# The environment is compared by what changes SGLang's behaviour: what the profile sets, the GPU
# pinning, SGLang's own SGLANG_* switches (minus the run id SGLang stamps), and these known tuning
# variables. Everything else a container image bakes in (NCCL_VERSION, CUDA_VERSION, NV_*,
# NVIDIA_*, ...) is ambient: shown apart, never drift, so the verdict does not depend on who
# started the server (README: Drift).
TUNING_ENV = frozenset(
    {
        "CUDA_VISIBLE_DEVICES",
        "CUDA_DEVICE_MAX_CONNECTIONS",
        "CUDA_LAUNCH_BLOCKING",
        "CUDA_MODULE_LOADING",
        "PYTORCH_CUDA_ALLOC_CONF",
        "NCCL_ALGO",
        "NCCL_PROTO",
        "NCCL_P2P_DISABLE",
        "NCCL_P2P_LEVEL",
        "NCCL_IB_DISABLE",
        "NCCL_IB_HCA",
        "NCCL_NET_GDR_LEVEL",
        "NCCL_SOCKET_IFNAME",
        "NCCL_NVLS_ENABLE",
        "NCCL_CUMEM_ENABLE",
        "NCCL_MIN_NCHANNELS",
        "NCCL_MAX_NCHANNELS",
        "NCCL_BUFFSIZE",
        "OMP_NUM_THREADS",
    }
)
TUNING_PREFIXES = ("SGLANG_",)
NOT_TUNING = frozenset({"SGLANG_RUN_ID"})
AMBIENT_PREFIXES = (
    "NCCL_",
    "CUDA_",
    "CUDNN_",
    "NV_",
    "NVIDIA_",
    "TORCH_",
    "TORCHINDUCTOR_",
    "PYTORCH_",
    "SGLANG_",
)
# What changes which kernels get built (the JIT of flashinfer, tvm-ffi, triton, torch extensions)
# and where the builds are cached: the same profile launched over SSH re-ran a 30 s JIT that a
# hand launch had cached (a real H200, 0.5.17). Shown as their own group, never as ambient, and
# drift only where the profile sets them (then they are compared like any variable it sets).
BUILD_ENV = (
    "TORCH_CUDA_ARCH_LIST",
    "FLASHINFER_CUDA_ARCH_LIST",
    "CUDA_HOME",
    "CUDA_PATH",
    "CUDAHOSTCXX",
    "CC",
    "CXX",
    "MAX_JOBS",
    "NVCC_THREADS",
    "NVCC_APPEND_FLAGS",
    "NVCC_PREPEND_FLAGS",
    "FLASHINFER_WORKSPACE_BASE",
    "TVM_FFI_CACHE_DIR",
    "TRITON_CACHE_DIR",
    "TRITON_HOME",
    "TORCH_EXTENSIONS_DIR",
    "TORCHINDUCTOR_CACHE_DIR",
    "XDG_CACHE_HOME",
    "HOME",
)
"""Asked of the host by name (the process scan sends only the names it is asked for)."""
BUILD_PREFIXES = ("NVCC_", "FLASHINFER_", "TVM_FFI_")


def is_tuning(name: str) -> bool:
    return name not in NOT_TUNING and (name in TUNING_ENV or name.startswith(TUNING_PREFIXES))


def is_build(name: str) -> bool:
    return name in BUILD_ENV or name.startswith(BUILD_PREFIXES)


def build_env(profile_env: dict[str, str], running_env: dict[str, str]) -> dict[str, str]:
    """The running server's build and JIT-cache variables that the profile leaves to the host."""
    return {
        name: value
        for name, value in sorted(running_env.items())
        if is_build(name) and name not in profile_env and not is_tuning(name)
    }


def ambient_env(profile_env: dict[str, str], running_env: dict[str, str]) -> dict[str, str]:
    """What the running server's environment holds from its image or shell that could look like
    tuning but is not compared (NCCL_VERSION, CUDA_VERSION, NV_*, ...)."""
    return {
        name: value
        for name, value in sorted(running_env.items())
        if name.startswith(AMBIENT_PREFIXES)
        and name not in profile_env
        and not is_tuning(name)
        and not is_build(name)
    }
