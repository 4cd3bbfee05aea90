"""A simulated host's container engine: Debian's Docker or Podman, private to the host.

Docker: a dockerd of its own (socket, data-root and exec-root in a short folder under /tmp, no
bridge, no iptables), so nothing of the machine's own Docker, if it has one, is touched. Podman:
a store of its own (--root/--runroot) and a containers.conf that lowers the default ulimits
(a sandbox may forbid raising them, and podman's runc spec sets NOFILE/NPROC: "error setting
rlimit type 7: operation not permitted"). The host's `docker`/`podman` (ROOT/bin, first on its
PATH) is Debian's CLI pointed at them, so the console's own argv stays plain `docker ps`.

Both run INSIDE the host's namespaces (nsenter into its PID 1): a container's host PIDs are
then the PIDs the host's login sees in /proc, and `--network host` is the host's loopback.
The simulated server inside runs with `--pid host`: it registers its GPU use by its own pid
(gpustate), and a real nvidia-smi reports host PIDs, so the two agree only in the host's PID
namespace. Images come from `import` of an empty root filesystem (no registry is contacted);
the host's interpreter, the simulator's code and the system libraries are mounted read-only.
"""

from __future__ import annotations

import io
import os
import shutil
import signal
import subprocess
import sys
import tarfile
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from sglconsole.sim.fleet.files import fill
from sglconsole.sim.fleet.host import SimHost
from sglconsole.sim.host.root import PROJECT_ROOT, sim_paths

DOCKER, PODMAN = "docker", "podman"
DOCKER_CLI, DOCKERD, PODMAN_CLI = "/usr/bin/docker", "/usr/sbin/dockerd", "/usr/bin/podman"
# Debian's CLI, never a newer one earlier on PATH (/usr/local/bin/docker may speak a newer API)
IMAGE = "lmsysorg/sglang"
VERSION_LABEL = "org.opencontainers.image.version"
ULIMITS = ("nproc=4096:4096", "nofile=1024:1024")  # below the caller's: lowering is allowed
START_S = 30.0  # dockerd's first start (containerd, overlay2 checks) took ~3 s on 2 busy cores


READY_LINE = "The server is fired up and ready to roll!"


def boot(host: SimHost) -> tuple[dict[str, HostEngine], list[str]]:
    """The host's engines started, their image built, its container servers run: (the engines
    by kind, one line for each engine this machine could not start)."""
    started: dict[str, HostEngine] = {}
    notes = []
    for kind in (DOCKER, PODMAN):
        if kind not in host.spec.engines:
            _write_absent(host, kind)
    for kind in host.spec.engines:
        reason = unavailable(kind)
        if reason:
            notes.append(f"simulated host {host.spec.name} has no {kind} containers: {reason}")
            continue
        try:
            started[kind] = start_engine(host, kind)
        except EngineDidNotStart as exc:  # a machine whose kernel or sandbox refuses it
            notes.append(f"simulated host {host.spec.name} has no {kind} containers: {exc}")
            continue
        build_image(started[kind], host.spec.sglang_version)
    for server in host.spec.servers:
        engine = started.get(server.container or "")
        if engine is None or server.running is None:
            continue
        args = [fill(host, arg) for arg in server.running]
        if "--port" not in args:
            args += ["--port", str(server.port)]
        run_server(engine, container_name(server.port), args, gpus=server.gpus)
    return started, notes


def _write_absent(host: SimHost, kind: str) -> None:
    """ROOT/bin/KIND answering as a missing command does (exit 127): a simulated host has only
    the engines its spec gives it, and this machine's own (its podman store, a docker CLI
    without a daemon) must not show through on it."""
    path = host.root / "bin" / kind
    path.write_text(f'#!/bin/sh\necho "sh: 1: {kind}: not found" >&2\nexit 127\n')
    path.chmod(0o755)


def container_name(port: int) -> str:
    return f"sglang-{port}"


def is_ready(engine: HostEngine, name: str) -> bool:
    """Whether the container's server has logged SGLang's ready line (in its engine's log)."""
    try:
        return READY_LINE in engine.run("logs", name, timeout=30)
    except (RuntimeError, subprocess.TimeoutExpired):
        return False


class EngineDidNotStart(RuntimeError):
    """The engine is installed but cannot run here (its own words, shortened)."""


def unavailable(kind: str) -> str | None:
    """Why this machine cannot run `kind` for a simulated host (None: it can)."""
    binaries = {DOCKER: (DOCKER_CLI, DOCKERD), PODMAN: (PODMAN_CLI,)}[kind]
    missing = [path for path in binaries if not os.access(path, os.X_OK)]
    if missing:
        package = "docker.io" if kind == DOCKER else "podman"
        return f"{kind} is not installed ({' '.join(missing)} missing: apt-get install {package})"
    if os.geteuid() != 0:
        return f"a private {kind} engine for the simulated host needs root"
    return None


@dataclass
class HostEngine:
    kind: str
    host: SimHost
    state: Path
    """The engine's own folder (short: a unix socket path must fit in 108 bytes)."""
    daemon: subprocess.Popen | None = None
    containers: list[str] = field(default_factory=list)

    @property
    def socket(self) -> Path:
        return self.state / "docker.sock"

    def cli(self) -> list[str]:
        """The engine's CLI as the host runs it (argv prefix), without entering the host."""
        if self.kind == DOCKER:
            return [DOCKER_CLI, "--host", f"unix://{self.socket}"]
        return [
            PODMAN_CLI,
            "--root",
            str(self.state / "root"),
            "--runroot",
            str(self.state / "run"),
        ]

    def env(self) -> dict[str, str]:
        extra = (
            {"CONTAINERS_CONF": str(self.state / "containers.conf")} if self.kind == PODMAN else {}
        )
        return {**os.environ, **extra}

    def run(self, *args: str, stdin: bytes | None = None, timeout: float = 60.0) -> str:
        """`docker ARGS` / `podman ARGS` on the host (in its namespaces); raises with stderr."""
        command = [*inside(self.host), *self.cli(), *args]
        done = subprocess.run(
            command, input=stdin, capture_output=True, timeout=timeout, env=self.env()
        )
        if done.returncode != 0:
            raise RuntimeError(
                f"{self.kind} {' '.join(args[:2])} failed ({done.returncode}): "
                f"{done.stderr.decode(errors='replace').strip()[-800:]}"
            )
        return done.stdout.decode(errors="replace")


def inside(host: SimHost) -> list[str]:
    """The argv prefix that runs a command in the host's PID, network and mount namespaces."""
    if not host.namespaced or host.process is None:
        return []
    children = Path(f"/proc/{host.process.pid}/task/{host.process.pid}/children").read_text()
    return ["nsenter", "-t", children.split()[0], "-p", "-n", "-m", "--"]


def start_engine(host: SimHost, kind: str) -> HostEngine:
    """The host's engine running, its CLI on the host's PATH (ROOT/bin)."""
    reason = unavailable(kind)
    if reason:
        raise RuntimeError(reason)
    engine = HostEngine(kind, host, Path(tempfile.mkdtemp(prefix=f"sgl{kind[:2]}-")))
    if kind == DOCKER:
        _start_dockerd(engine)
    else:
        # its own tmp dir and file locks: the defaults (/run/libpod, one /dev/shm lock table)
        # are shared with every other podman store on this machine
        lines = ", ".join(f'"{limit}"' for limit in ULIMITS)
        (engine.state / "containers.conf").write_text(
            f"[containers]\ndefault_ulimits = [{lines}]\n\n[engine]\n"
            f'tmp_dir = "{engine.state / "tmp"}"\nlock_type = "file"\n'
        )
        try:
            engine.run("info", timeout=60)
        except (RuntimeError, subprocess.TimeoutExpired) as exc:
            stop_engine(engine)
            raise EngineDidNotStart(f"podman info failed: {str(exc)[-300:]}") from None
    _write_wrapper(engine)
    return engine


def _start_dockerd(engine: HostEngine) -> None:
    state = engine.state
    command = [
        *inside(engine.host),
        DOCKERD,
        f"--host=unix://{engine.socket}",
        f"--data-root={state / 'root'}",
        f"--exec-root={state / 'exec'}",
        f"--pidfile={state / 'dockerd.pid'}",
        "--bridge=none",  # no bridge, no NAT: the containers use the host's network
        "--iptables=false",
        "--ip6tables=false",
    ]
    log = open(state / "dockerd.log", "ab")  # noqa: SIM115
    engine.daemon = subprocess.Popen(
        command, stdin=subprocess.DEVNULL, stdout=log, stderr=log, start_new_session=True
    )
    log.close()
    deadline = time.monotonic() + START_S
    while True:
        probe = subprocess.run([*engine.cli(), "version"], capture_output=True, timeout=30)
        if probe.returncode == 0:
            return
        if engine.daemon.poll() is not None or time.monotonic() > deadline:
            tail = (state / "dockerd.log").read_text(errors="replace")[-300:]
            stop_engine(engine)
            raise EngineDidNotStart(f"dockerd did not start: {tail}")
        time.sleep(0.2)


def _write_wrapper(engine: HostEngine) -> None:
    """ROOT/bin/docker or /podman: Debian's CLI with this host's engine settings."""
    import shlex

    path = engine.host.root / "bin" / engine.kind
    exports = "".join(f"export {name}={shlex.quote(value)}\n" for name, value in _env_of(engine))
    path.write_text(f'#!/bin/sh\n{exports}exec {shlex.join(engine.cli())} "$@"\n')
    path.chmod(0o755)


def _env_of(engine: HostEngine) -> list[tuple[str, str]]:
    if engine.kind == PODMAN:
        return [("CONTAINERS_CONF", str(engine.state / "containers.conf"))]
    return []


def build_image(engine: HostEngine, version: str, tag: str = "latest", marker: str = "") -> str:
    """`import` an empty root filesystem as IMAGE:tag labelled with SGLang `version`; a new
    `marker` gives the same tag new content (a re-pull to a new digest). Returns the image id."""
    data = io.BytesIO()
    with tarfile.open(fileobj=data, mode="w") as archive:
        for name in ("usr", "lib", "lib64", "bin", "etc", "tmp", "root", "proc", "sys", "dev"):
            entry = tarfile.TarInfo(name)
            entry.type, entry.mode = tarfile.DIRTYPE, 0o755
            archive.addfile(entry)
        payload = f"sglang {version} {marker}\n".encode()
        entry = tarfile.TarInfo("etc/sglang-image")
        entry.size = len(payload)
        archive.addfile(entry, io.BytesIO(payload))
    change = f"LABEL {VERSION_LABEL}={version}"
    out = engine.run(
        "import", "--change", change, "-", image_name(engine, tag), stdin=data.getvalue()
    )
    return out.strip().splitlines()[-1]


def image_name(engine: HostEngine, tag: str = "latest") -> str:
    # podman stores an imported short name under localhost/: say so, and no registry is asked
    return f"{'localhost/' if engine.kind == PODMAN else ''}{IMAGE}:{tag}"


def run_server(
    engine: HostEngine,
    name: str,
    args: list[str],
    *,
    gpus: list[int],
    tag: str = "latest",
    options: list[str] = (),
) -> str:
    """A simulated SGLang server in a container, as SGLang's guide runs one but on the host's
    network (it listens on the host's loopback): returns the container id."""
    host = engine.host
    argv = ["run", "-d", "--name", name, "--network", "host", "--pid", "host"]
    argv += ["--shm-size", "32g", "--restart", "unless-stopped"]
    if gpus:
        argv += ["-e", f"NVIDIA_VISIBLE_DEVICES={','.join(map(str, gpus))}"]
        argv += ["-e", f"CUDA_VISIBLE_DEVICES={','.join(map(str, gpus))}"]  # the sim reads it
    for source, target, mode in _mounts(host):
        argv += ["-v", f"{source}:{target}:{mode}"]
    argv += [*options, image_name(engine, tag), host.python, "-m", "sglang.launch_server", *args]
    container = engine.run(*argv).strip().splitlines()[-1]
    engine.containers.append(container)
    return container


def _mounts(host: SimHost) -> list[tuple[str, str, str]]:
    """What the host's simulated python needs inside an empty image: read-only but its root."""
    read_only = ["/usr", "/lib", "/lib64", "/bin", PROJECT_ROOT, sys.base_prefix]
    read_only += [line for line in sim_paths().splitlines() if line]
    writable = [host.root] + ([host.layout] if host.layout else [])
    mounts = [(str(path), str(path), "rw") for path in writable]
    # each at its own path (merged /usr: /lib is a link to usr/lib, and the loader wants /lib64)
    for path in dict.fromkeys(str(path) for path in read_only):
        if os.path.isdir(path) and not any(path == mount[1] for mount in mounts):
            mounts.append((os.path.realpath(path), path, "ro"))
    return mounts


def stop_engine(engine: HostEngine) -> None:
    """The engine's containers and daemon ended and its folder removed (idempotent)."""
    for container in engine.containers:
        try:
            engine.run("rm", "-f", "-t", "2", container, timeout=30)
        except (RuntimeError, subprocess.TimeoutExpired, OSError):
            pass  # the host may already be gone, and with it its containers
    engine.containers.clear()
    daemon = engine.daemon
    if daemon is not None and daemon.poll() is None:
        pid = _daemon_pid(engine)
        if pid:
            subprocess.run([*_inside_or_none(engine.host), "kill", "-TERM", pid], timeout=10)
        try:
            daemon.wait(15)
        except subprocess.TimeoutExpired:
            os.killpg(daemon.pid, signal.SIGKILL)
            daemon.wait()
    if engine.kind == PODMAN:  # its conmons outlive the CLI: end them with the store
        try:
            engine.run("rm", "-a", "-f", "-t", "2", timeout=60)
        except (RuntimeError, subprocess.TimeoutExpired, OSError):
            pass
    shutil.rmtree(engine.state, ignore_errors=True)


def _daemon_pid(engine: HostEngine) -> str | None:
    try:
        return (engine.state / "dockerd.pid").read_text().strip() or None
    except OSError:
        return None


def _inside_or_none(host: SimHost) -> list[str]:
    try:
        return inside(host)
    except (OSError, IndexError):
        return []
