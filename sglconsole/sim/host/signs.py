"""A simulated host's signs of trouble to come: memory that leaks, and a kernel log that gets GPU
Xid / NVRM lines and OOM-killer lines on demand (hostd runs `keep_signs` in a thread).

They live in ROOT/sim/host.json, read live (within ~1 s), like the other host settings:

    "memory": {"total_mib": 2063872, "available_mib": 1900000, "leak_mib_s": 0},
    "kernel_log": "ok" | "denied",
    "kernel_events": [{"id": 1, "kind": "xid", "gpu": 0, "xid": 79, "unknown_pid": false},
                      {"id": 2, "kind": "oom_kill", "port": 30000}]

* memory: the host's /proc/meminfo. In its own namespaces, init binds ROOT/sim/meminfo over
  /proc/meminfo (a user namespace may bind over a file of the procfs it mounted), and this loop
  rewrites it in place: MemAvailable falls by leak_mib_s every second while it is set, and
  stays where it fell when it is set back to 0. A host without namespaces shows the machine's own.
  The servers' own RSS leaks are theirs (a port's `leak_mib_s` in sglang settings: child.py).
* kernel_log: "denied" makes the host's `dmesg` answer as the kernel does to a login without
  CAP_SYSLOG under kernel.dmesg_restrict=1 (sim/host/dmesg.py).
* kernel_events: each id is written once to ROOT/sim/kmsg (what `dmesg` prints), in the
  driver's and the kernel's own words. "xid": `NVRM: Xid (PCI:BUS): N, pid=P, name=NAME, ...`
  for GPU `gpu` (pid and name: the first scheduler on that GPU, else, or with "unknown_pid",
  '<unknown>' as drivers often write); "oom_kill":
  the OOM killer's three lines naming the scheduler of the server on `port`, which is then
  killed (SIGKILL), as the kernel does. With `ago_s` the lines are stamped that long ago and,
  with `"kill": false`, nobody is killed: an old kill whose pid a newer process holds now.
"""

from __future__ import annotations

import json
import os
import signal
import threading
import time

from sglconsole.sim import gpustate
from sglconsole.sim.gpu_models import get_model, gpu_bus_id

TICK_S = 1.0  # a switch takes effect within a second; hostd's CPU counts in the benches' host side
MEMORY_DEFAULTS = {"total_mib": 2063872, "available_mib": 1900000, "leak_mib_s": 0}
XID_TEXT = {
    79: "GPU has fallen off the bus.",
    48: "An uncorrectable double bit error (DBE) has been detected on GPU in the framebuffer at "
    "partition 0, subpartition 0.",
    63: "Row remapping event: Bank 3, Row 0x1a2b, Err type 0x1.",
    94: "Contained: SM (0x1). RST: No, D-RST: No",
    13: "Graphics SM Warp Exception on (GPC 0, TPC 0, SM 0): Out Of Range Address",
}


def meminfo_path(root: str) -> str:
    return os.path.join(root, "sim", "meminfo")


def kmsg_path(root: str) -> str:
    return os.path.join(root, "sim", "kmsg")


def meminfo_text(total_kb: int, available_kb: int) -> str:
    """/proc/meminfo as the kernel writes it (fixed widths, so an in-place rewrite never leaves
    a longer old tail behind)."""
    free_kb = max(0, available_kb - 4194304)
    rows = [
        ("MemTotal", total_kb),
        ("MemFree", free_kb),
        ("MemAvailable", available_kb),
        ("Buffers", 2097152),
        ("Cached", 3145728),
        ("SwapCached", 0),
        ("SwapTotal", 0),
        ("SwapFree", 0),
    ]
    return "".join(f"{name + ':':<16}{max(0, value):>12} kB\n" for name, value in rows)


def write_meminfo(root: str, available_kb: int | None = None) -> int:
    """Write ROOT/sim/meminfo in place (a bind mount follows the inode); return MemAvailable."""
    memory = {**MEMORY_DEFAULTS, **(gpustate.load_host(root).get("memory") or {})}
    total_kb = int(memory["total_mib"]) * 1024
    if available_kb is None:
        available_kb = int(memory["available_mib"]) * 1024
    data = meminfo_text(total_kb, available_kb).encode()
    descriptor = os.open(meminfo_path(root), os.O_WRONLY | os.O_CREAT, 0o644)
    try:
        os.pwrite(descriptor, data, 0)
        os.ftruncate(descriptor, len(data))
    finally:
        os.close(descriptor)
    return available_kb


def kernel_line(root: str, text: str, when: float | None = None) -> None:
    """Append one line to the host's kernel log (what its dmesg prints)."""
    stamp = time.time() if when is None else when
    with open(kmsg_path(root), "a", encoding="utf-8") as file:
        file.write(f"{stamp:.6f} {text}\n")


def keep_signs(root: str, stop: threading.Event) -> None:
    """Forever (until `stop`): the leaking MemAvailable, and the kernel events asked for."""
    available_kb = written = write_meminfo(root)
    done = _done(root)
    last, base, total = time.monotonic(), None, None
    while not stop.wait(TICK_S):
        host = gpustate.load_host(root)
        now = time.monotonic()
        memory = {**MEMORY_DEFAULTS, **(host.get("memory") or {})}
        if memory["available_mib"] != base:  # set anew: the leak goes on from there
            base, available_kb = memory["available_mib"], int(memory["available_mib"]) * 1024
        available_kb = int(available_kb - float(memory["leak_mib_s"] or 0) * 1024 * (now - last))
        if available_kb != written or memory["total_mib"] != total:  # unchanged: not rewritten
            written, total = write_meminfo(root, available_kb), memory["total_mib"]
        last = now
        for event in host.get("kernel_events") or []:
            if isinstance(event, dict) and event.get("id") not in done:
                done.add(event.get("id"))
                _happen(root, host, event)
                _remember(root, done)


def _happen(root: str, host: dict, event: dict) -> None:
    if event.get("kind") == "xid":
        gpu = int(event.get("gpu", 0))
        bus = gpu_bus_id(get_model(host.get("gpu_model")), gpu)  # 00000000:18:00.0
        holder = None if event.get("unknown_pid") else _scheduler_on_gpu(root, gpu)
        pid, name = holder if holder else ("'<unknown>'", "<unknown>")
        number = int(event.get("xid", 79))
        text = XID_TEXT.get(number, "Unknown Error")
        kernel_line(root, f"NVRM: Xid (PCI:{bus[4:14]}): {number}, pid={pid}, name={name}, {text}")
    elif event.get("kind") == "oom_kill":
        victim = _scheduler_of_port(int(event.get("port", 30000)))
        if victim is None:
            return
        pid, comm = victim
        rss_kb = _rss_kb(pid)
        when = time.time() - float(event.get("ago_s", 0))
        kernel_line(
            root,
            f"{comm} invoked oom-killer: gfp_mask=0x140cca(GFP_HIGHUSER_MOVABLE|__GFP_COMP), "
            "order=0, oom_score_adj=0",
            when,
        )
        kernel_line(
            root,
            "oom-kill:constraint=CONSTRAINT_NONE,nodemask=(null),cpuset=/,mems_allowed=0-1,"
            f"global_oom,task_memcg={_memcg(pid)},task={comm},pid={pid},uid=0",
            when,
        )
        kernel_line(
            root,
            f"Out of memory: Killed process {pid} ({comm}) total-vm:{rss_kb * 3}kB, "
            f"anon-rss:{rss_kb}kB, file-rss:0kB, shmem-rss:0kB, UID:0 pgtables:{rss_kb // 500}kB "
            "oom_score_adj:0",
            when,
        )
        if event.get("kill", True):
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass


def _scheduler_on_gpu(root: str, gpu: int) -> tuple[int, str] | None:
    for use in gpustate.read_gpu_uses(root):
        if gpu in use.get("gpus", ()) and "scheduler" in str(use.get("name", "")):
            return int(use["pid"]), _comm(int(use["pid"])) or "python3"
    return None


def _scheduler_of_port(port: int) -> tuple[int, str] | None:
    """The first `sglang::scheduler*` child of the server started with `--port PORT`."""
    mains, children = set(), []
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        argv = _read(f"/proc/{name}/cmdline").split("\0")
        if "sglang.launch_server" in argv or "serve" in argv[1:3]:
            if "--port" in argv and argv[argv.index("--port") + 1 :][:1] == [str(port)]:
                mains.add(int(name))
        elif argv and argv[0].startswith("sglang::scheduler"):
            stat = _read(f"/proc/{name}/stat").rpartition(")")[2].split()
            if len(stat) > 1:
                children.append((int(name), int(stat[1])))
    for pid, parent in sorted(children):
        if parent in mains:
            return pid, _comm(pid) or "python3"
    return None


def _memcg(pid: int) -> str:
    """The process's cgroup as the OOM killer names it (the v2 path of /proc/PID/cgroup), e.g. a
    launch's systemd unit; a session's scope for one started by hand."""
    for line in _read(f"/proc/{pid}/cgroup").splitlines():
        if line.startswith("0::") and line[3:] not in ("", "/"):
            return line[3:]
    return "/user.slice/user-0.slice/session-1.scope"


def _comm(pid: int) -> str:
    return _read(f"/proc/{pid}/comm").strip()


def _rss_kb(pid: int) -> int:
    for line in _read(f"/proc/{pid}/status").splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return 0


def _read(path: str) -> str:
    try:
        with open(path, encoding="utf-8", errors="replace") as file:
            return file.read()
    except OSError:
        return ""


def _done(root: str) -> set:
    """The kernel events already written (a rebooted host does not write them twice)."""
    try:
        with open(os.path.join(root, "sim", "kernel-events-done.json"), encoding="utf-8") as file:
            return set(json.load(file))
    except (OSError, ValueError, TypeError):
        return set()


def _remember(root: str, done: set) -> None:
    with open(os.path.join(root, "sim", "kernel-events-done.json"), "w", encoding="utf-8") as file:
        json.dump(sorted(done, key=str), file)
