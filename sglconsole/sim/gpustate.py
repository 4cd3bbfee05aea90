"""The simulated GPU host's shared state (stdlib only; imported by simulated processes).

A simulated GPU host is a folder ROOT:

* ``ROOT/sim/host.json`` — the host's GPUs and how its ``nvidia-smi`` behaves::

    {"gpu_model": "H200" | "A6000", "gpu_count": N, "driver_version": "580.159.04",
     "cuda_version": "13.0", "uuid_seed": "<hostname>", "pid_offset": 0,
     "nvidia_smi": "ok" | "hang" | "fail" | "garbage" | "empty" | "no_driver"}

  ``pid_offset`` != 0 models an LXC container: nvidia-smi reports host PIDs
  (container pid + offset) that do not exist in the container's /proc. Also there, read live:
  ``"ecc": {"INDEX": {"corrected", "uncorrected", "remapped_correctable", ...}}`` (the GPU's
  counters, nvidia_smi/state.py) and the signs before an outage (host/signs.py: "memory",
  "kernel_log", "kernel_events").

* ``ROOT/sim/gpu/<pid>.json`` — one per simulated process holding GPU memory::

    {"pid": int, "gpus": [physical indices], "mem_mib": int (per GPU),
     "util": 0-100, "name": "process name as nvidia-smi shows it"}

  Files of dead or zombie processes are ignored (and removed lazily).
"""

from __future__ import annotations

import json
import os

__all__ = [
    "HOST_DEFAULTS",
    "NVIDIA_SMI_MODES",
    "host_path",
    "gpu_dir",
    "load_host",
    "write_host",
    "register_gpu_use",
    "unregister_gpu_use",
    "read_gpu_uses",
    "pid_alive",
]

NVIDIA_SMI_MODES = ("ok", "hang", "fail", "garbage", "empty", "no_driver")

HOST_DEFAULTS: dict = {
    "gpu_model": "H200",
    "gpu_count": 1,
    "driver_version": "580.159.04",
    "cuda_version": "13.0",
    "uuid_seed": None,  # None -> the root folder's name
    "pid_offset": 0,
    "nvidia_smi": "ok",
}


def host_path(root: str | os.PathLike) -> str:
    return os.path.join(os.fspath(root), "sim", "host.json")


def gpu_dir(root: str | os.PathLike) -> str:
    return os.path.join(os.fspath(root), "sim", "gpu")


def _atomic_write_json(path: str, data: dict) -> None:
    directory = os.path.dirname(path)
    os.makedirs(directory, exist_ok=True)
    tmp = os.path.join(directory, f".{os.path.basename(path)}.{os.getpid()}.tmp")
    with open(tmp, "w", encoding="utf-8") as file:
        json.dump(data, file, sort_keys=True)
    os.replace(tmp, path)


def load_host(root: str | os.PathLike) -> dict:
    """host.json merged over the defaults (a missing or broken file gives the defaults)."""
    root = os.fspath(root)
    host = dict(HOST_DEFAULTS)
    try:
        with open(host_path(root), encoding="utf-8") as file:
            data = json.load(file)
        if isinstance(data, dict):
            host.update(data)
    except (OSError, ValueError):
        pass
    if not host.get("uuid_seed"):
        host["uuid_seed"] = os.path.basename(os.path.normpath(os.path.abspath(root))) or "sim"
    try:
        host["gpu_count"] = max(0, int(host["gpu_count"]))
    except (TypeError, ValueError):
        host["gpu_count"] = 1
    try:
        host["pid_offset"] = int(host["pid_offset"])
    except (TypeError, ValueError):
        host["pid_offset"] = 0
    return host


def write_host(root: str | os.PathLike, **settings) -> dict:
    """Update host.json with ``settings`` (keeping what was there); returns the file's content."""
    path = host_path(root)
    data: dict = {}
    try:
        with open(path, encoding="utf-8") as file:
            old = json.load(file)
        if isinstance(old, dict):
            data.update(old)
    except (OSError, ValueError):
        pass
    data.update(settings)
    mode = data.get("nvidia_smi", "ok")
    if mode not in NVIDIA_SMI_MODES:
        raise ValueError(f"nvidia_smi mode {mode!r} not in {NVIDIA_SMI_MODES}")
    _atomic_write_json(path, data)
    return data


def register_gpu_use(
    root: str | os.PathLike,
    pid: int,
    gpus,
    mem_mib: int,
    util: int = 0,
    name: str = "python3",
) -> None:
    """Declare (or update) that process ``pid`` holds ``mem_mib`` MiB on each of ``gpus``."""
    data = {
        "pid": int(pid),
        "gpus": [int(gpu) for gpu in gpus],
        "mem_mib": max(0, int(mem_mib)),
        "util": max(0, min(100, int(util))),
        "name": str(name),
    }
    _atomic_write_json(os.path.join(gpu_dir(root), f"{int(pid)}.json"), data)


def unregister_gpu_use(root: str | os.PathLike, pid: int) -> None:
    try:
        os.unlink(os.path.join(gpu_dir(root), f"{int(pid)}.json"))
    except FileNotFoundError:
        pass


def pid_alive(pid: int) -> bool:
    """True if ``pid`` exists and is not a zombie (reads /proc/<pid>/stat)."""
    try:
        with open(f"/proc/{int(pid)}/stat", "rb") as file:
            stat = file.read()
    except (OSError, ValueError):
        return False
    # "pid (comm) S ..." — comm may contain spaces/parens: the state follows the last ')'
    rest = stat[stat.rfind(b")") + 1 :].split()
    if not rest:
        return False
    return rest[0] not in (b"Z", b"X", b"x")


def read_gpu_uses(root: str | os.PathLike) -> list[dict]:
    """The registered GPU uses of live processes, sorted by pid."""
    directory = gpu_dir(root)
    try:
        names = os.listdir(directory)
    except OSError:
        return []
    uses = []
    for filename in names:
        if not filename.endswith(".json") or filename.startswith("."):
            continue
        path = os.path.join(directory, filename)
        try:
            with open(path, encoding="utf-8") as file:
                use = json.load(file)
            pid = int(use["pid"])
            gpus = [int(gpu) for gpu in use.get("gpus", [])]
            mem = max(0, int(use.get("mem_mib", 0)))
            util = max(0, min(100, int(use.get("util", 0))))
            name = str(use.get("name") or "python3")
        except (OSError, ValueError, KeyError, TypeError, AttributeError):
            continue
        if not pid_alive(pid):
            try:
                os.unlink(path)
            except OSError:
                pass
            continue
        uses.append({"pid": pid, "gpus": gpus, "mem_mib": mem, "util": util, "name": name})
    uses.sort(key=lambda use: use["pid"])
    return uses
