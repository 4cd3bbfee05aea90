"""From a host's process table to SGLang servers, their children and orphans (pure).

Input is what the watcher reports (sglconsole/remote/agents/watcher_agent.py) plus
nvidia-smi's compute-apps; output says which processes are servers (by argv,
never by name alone), which children belong to them (by parentage, process
group and session), which SGLang children lost their server (reparented to
PID 1, still holding GPU memory), which processes are weight-cache daemons (they
hold a model's weights in GPU memory across server restarts, by design), and
which GPU memory nobody accounts for.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from sglconsole.core.launch_form import flag, split_launch
from sglconsole.core.nvidia_smi import ComputeApp, GpuSample

DEFAULT_PORT = 30000
WEIGHT_CACHE_DAEMON = "sglang.srt.weight_cache.daemon"
"""The standalone daemon's module (0.5.17+): servers attach with --weight-cache-mode client."""


@dataclass(frozen=True, slots=True)
class ProcInfo:
    pid: int
    ppid: int
    pgid: int
    sid: int
    state: str
    comm: str
    argv: tuple[str, ...]
    start: float
    """Start time, seconds since the epoch (boot time + start ticks)."""
    start_ticks: int
    main: bool = False
    env: dict[str, str] | None = None
    cwd: str | None = None
    stdout: str | None = None
    exe: str | None = None
    ancestors: tuple[str, ...] = ()
    """A server's parent's and grandparent's names (comm), nearest first; () for others."""

    @property
    def zombie(self) -> bool:
        return self.state == "Z"

    @property
    def title(self) -> str:
        return " ".join(self.argv) if self.argv else f"[{self.comm}]"

    @property
    def sglang_child(self) -> bool:
        """Named like an SGLang child (setproctitle), e.g. sglang::scheduler_TP0."""
        head = self.argv[0] if self.argv else self.comm
        return head.startswith("sglang::")

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> ProcInfo | None:
        try:
            return cls(
                pid=int(data["pid"]),
                ppid=int(data.get("ppid", 0)),
                pgid=int(data.get("pgid", 0)),
                sid=int(data.get("sid", 0)),
                state=str(data.get("state", "?"))[:1],
                comm=str(data.get("comm", "")),
                argv=tuple(str(arg) for arg in data.get("argv") or ()),
                start=float(data.get("start", 0.0)),
                start_ticks=int(data.get("start_ticks", 0)),
                main=bool(data.get("main")),
                env={str(name): str(value) for name, value in (data.get("env") or {}).items()}
                if data.get("env") is not None
                else None,
                cwd=_opt_str(data.get("cwd")),
                stdout=_opt_str(data.get("stdout")),
                exe=_opt_str(data.get("exe")),
                ancestors=tuple(str(name) for name in data.get("ancestors") or ()),
            )
        except (
            KeyError,
            TypeError,
            ValueError,
            AttributeError,
            OverflowError,
        ):  # OverflowError: int(inf)
            return None


def _opt_str(value: Any) -> str | None:
    return None if value is None else str(value)


def port_of(argv: tuple[str, ...] | list[str]) -> int:
    for index, arg in enumerate(argv):
        if arg == "--port" and index + 1 < len(argv):
            return _int(argv[index + 1], DEFAULT_PORT)
        if arg.startswith("--port="):
            return _int(arg.split("=", 1)[1], DEFAULT_PORT)
    return DEFAULT_PORT


def _int(text: str, default: int) -> int:
    try:
        return int(text)
    except ValueError:
        return default


def is_weight_cache_daemon(argv: tuple[str, ...] | list[str]) -> bool:
    """`python -m sglang.srt.weight_cache.daemon ...` (or the module's file run as a script)."""
    for index, arg in enumerate(argv[:8]):
        if arg == "-c":
            return False
        if arg == "-m":
            return list(argv[index + 1 : index + 2]) == [WEIGHT_CACHE_DAEMON]
        if arg.endswith("sglang/srt/weight_cache/daemon.py"):
            return True
    return False


def launch_args(argv: tuple[str, ...]) -> tuple[str, ...]:
    """The arguments after `-m sglang.launch_server` / `sglang serve`, as written (what SGLang's
    parser gets from them: core.launch_form.parser_args)."""
    return split_launch(argv)[1]


@dataclass(frozen=True, slots=True)
class ServerProcess:
    main: ProcInfo
    port: int
    children: tuple[ProcInfo, ...]
    gpus: tuple[int, ...]
    gpu_mem_mib: int

    @property
    def zombies(self) -> tuple[ProcInfo, ...]:
        return tuple(child for child in self.children if child.zombie)

    @property
    def args(self) -> tuple[str, ...]:
        return launch_args(self.main.argv)

    @property
    def python(self) -> str:
        return self.main.argv[0] if self.main.argv else ""

    @property
    def tp_size(self) -> int:
        return _int(flag(self.args, "--tp-size") or flag(self.args, "--tp") or "1", 1)

    @property
    def weight_cache_mode(self) -> str:
        """off | daemon (its own daemons: children, gone with it) | client (loads from a
        standalone daemon that outlives it); SGLang 0.5.17+."""
        return flag(self.args, "--weight-cache-mode") or "off"


@dataclass(frozen=True, slots=True)
class WeightCacheDaemon:
    """A standalone weight-cache daemon: it keeps a model's weights in GPU memory across server
    restarts by design, so its memory is neither an orphan's nor unaccounted for."""

    main: ProcInfo
    members: tuple[ProcInfo, ...]
    """Its rank processes (multiprocessing children), which hold the memory."""
    gpus: tuple[int, ...]
    held: tuple[ComputeApp, ...]

    @property
    def gpu_mem_mib(self) -> int:
        return sum(app.used_mib or 0 for app in self.held)

    @property
    def model(self) -> str:
        return flag(self.main.argv, "--model-path") or flag(self.main.argv, "--model") or "?"

    def mib_on(self, gpu_uuid: str | None) -> int:
        return sum(app.used_mib or 0 for app in self.held if app.gpu_uuid == gpu_uuid)

    def describe(self) -> str:
        """The one sentence every view shows for it."""
        where = f" on GPU {','.join(map(str, self.gpus))}" if self.gpus else ""
        return (
            f"weight-cache daemon pid {self.main.pid} ({self.model}) holds "
            f"{self.gpu_mem_mib} MiB{where} by design: it keeps the weights across server restarts"
        )


@dataclass(frozen=True, slots=True)
class ProcessView:
    servers: tuple[ServerProcess, ...]
    orphans: tuple[ProcInfo, ...]
    """SGLang children whose server is gone (reparented to PID 1 or to nothing we know)."""
    unaccounted: tuple[ComputeApp, ...]
    """Processes holding GPU memory that no server accounts for."""
    foreign_pids: bool
    """nvidia-smi reports PIDs this /proc does not have (an LXC container sees host PIDs)."""
    notes: tuple[str, ...] = field(default=())
    weight_caches: tuple[WeightCacheDaemon, ...] = field(default=())
    """Weight-cache daemons: GPU memory held by design."""


def analyse(procs: list[ProcInfo], apps: list[ComputeApp], gpus: list[GpuSample]) -> ProcessView:
    by_pid = {proc.pid: proc for proc in procs}
    mains = [proc for proc in procs if proc.main and not proc.zombie]
    uuid_to_index = {gpu.uuid: gpu.index for gpu in gpus if gpu.uuid}
    foreign = bool(apps) and not any(app.pid in by_pid for app in apps)
    servers = []
    claimed: set[int] = set()
    for main in mains:
        children = _descendants(main, procs)
        members = {main.pid, *(child.pid for child in children)}
        claimed |= members
        held = [app for app in apps if app.pid in members]
        gpu_ids = sorted(
            {uuid_to_index[app.gpu_uuid] for app in held if app.gpu_uuid in uuid_to_index}
        )
        if not gpu_ids:
            gpu_ids = _visible_gpus(main)
        servers.append(
            ServerProcess(
                main,
                port_of(launch_args(main.argv)),
                tuple(children),
                tuple(gpu_ids),
                sum(app.used_mib or 0 for app in held),
            )
        )
    caches = []
    for proc in procs:
        if proc.pid in claimed or proc.zombie or not is_weight_cache_daemon(proc.argv):
            continue
        members = (proc, *_descendants(proc, procs))
        pids = {member.pid for member in members}
        claimed |= pids
        held = tuple(app for app in apps if app.pid in pids)
        indices = sorted(
            {uuid_to_index[app.gpu_uuid] for app in held if app.gpu_uuid in uuid_to_index}
        )
        if (not indices or foreign) and proc.env is not None:  # no GPU table yet, or host PIDs
            indices = list(_visible_gpus(proc, proc.argv))  # its CUDA_VISIBLE_DEVICES
        caches.append(WeightCacheDaemon(proc, members[1:], tuple(indices), held))
    orphans = tuple(
        proc for proc in procs if proc.sglang_child and proc.pid not in claimed and not proc.zombie
    )
    unaccounted = tuple(app for app in apps if app.pid not in claimed) if not foreign else ()
    notes = ()
    if foreign:
        notes = (
            "nvidia-smi reports PIDs that this host's /proc does not have"
            " (a container sees host PIDs): GPUs are attributed by CUDA_VISIBLE_DEVICES instead",
        )
        servers = [_with_visible(server) for server in servers]
    return ProcessView(
        tuple(sorted(servers, key=lambda server: server.port)),
        orphans,
        unaccounted,
        foreign,
        notes,
        tuple(caches),
    )


def _descendants(main: ProcInfo, procs: list[ProcInfo]) -> list[ProcInfo]:
    """Children by parentage; by process group + session (SGLang children keep the server's)."""
    found: dict[int, ProcInfo] = {}
    frontier = [main.pid]
    while frontier:
        parent = frontier.pop()
        for proc in procs:
            if proc.ppid == parent and proc.pid not in found and proc.pid != main.pid:
                found[proc.pid] = proc
                frontier.append(proc.pid)
    return sorted(found.values(), key=lambda proc: proc.pid)


def _visible_gpus(main: ProcInfo, args: tuple[str, ...] | None = None) -> tuple[int, ...]:
    visible = (main.env or {}).get("CUDA_VISIBLE_DEVICES", "")
    ids = [int(device) for device in visible.split(",") if device.strip().isdigit()]
    args = launch_args(main.argv) if args is None else args
    tp_size = _int(flag(args, "--tp-size") or flag(args, "--tp") or "1", 1)
    return tuple(ids[:tp_size] if ids else range(tp_size))


def _with_visible(server: ServerProcess) -> ServerProcess:
    return ServerProcess(
        server.main, server.port, server.children, _visible_gpus(server.main), server.gpu_mem_mib
    )
