"""Start K simulated GPU hosts and write the hosts.yaml that reaches them.

Each host is its own machine as far as anything on it can tell: its own PID,
network and mount namespaces (``unshare``), so ``ps``, ``/proc`` and port
30000 on one host show only that host. Its SSH server listens on a socket
bound outside, on the host's own loopback address, and inherited by fd.
Where namespaces are not allowed, a single host runs without them.
"""

from __future__ import annotations

import os
import random
import shutil
import signal
import socket
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import asyncssh
import yaml

from sglconsole.sim.host import PROJECT_ROOT, create_host, path_env

LAYOUT_CANDIDATES = ("/srv", "/mnt", "/opt")


@dataclass
class ServerSpec:
    port: int
    profile: str
    gpus: list[int]
    running: list[str] | None = None
    """argv after `python -m sglang.launch_server` of the server running at boot (None: DOWN)."""
    running_env: dict[str, str] = field(default_factory=dict)
    launcher: str = "nohup"
    entry: str = "launch_server"
    """How the running server was started: `python -m sglang.launch_server`, or "serve"
    (`sglang serve`)."""


@dataclass
class HostSpec:
    name: str
    gpu_model: str = "H200"
    gpu_count: int = 1
    sglang_version: str = "0.5.23"
    pid_offset: int = 0
    exec_prefix: list[str] = field(default_factory=list)
    models: tuple[str, ...] = ("Qwen3-8B",)
    sglang: dict = field(default_factory=dict)
    servers: list[ServerSpec] = field(default_factory=list)
    sshd_config_extra: str = ""
    """Lines added to the host's sshd_config (tests: a setting that stops sshd from starting)."""
    login_shell: str | None = None
    """The SSH user's login shell on this host (e.g. /usr/bin/tcsh): with sshd, root's entry in
    the host's own /etc/passwd (bound over it in the host's mount namespace only)."""


@dataclass
class SimHost:
    spec: HostSpec
    root: Path
    address: str
    port: int
    layout: str | None
    sock: socket.socket
    ssh_mode: str
    namespaced: bool
    process: subprocess.Popen | None = None

    def seen(self, relative: str) -> str:
        """A path as processes on the host see it (e.g. 'logs/x.log' -> '/srv/logs/x.log')."""
        head, _, rest = relative.partition("/")
        if self.layout:
            name = {"env": "ml-env"}.get(head, head)
            return f"{self.layout}/{name}/{rest}".rstrip("/")
        return str(self.root / relative)

    def real(self, seen_path: str) -> Path:
        """The file behind a path as the host sees it, for tests to read from outside."""
        if self.layout and seen_path.startswith(self.layout + "/"):
            head, _, rest = seen_path[len(self.layout) + 1 :].partition("/")
            return self.root / {"ml-env": "env"}.get(head, head) / rest
        return Path(seen_path)

    @property
    def python(self) -> str:
        return self.seen("env/bin/python3")

    def pids(self, comm: str | None = None) -> list[int]:
        """PIDs (as this machine sees them) of the host's processes, optionally by command name."""
        namespace = self._namespace()
        if namespace is None:
            return []
        found = []
        for entry in Path("/proc").iterdir():
            if not entry.name.isdigit():
                continue
            try:
                if os.readlink(entry / "ns" / "pid") != namespace:
                    continue
                if comm is None or (entry / "comm").read_text().strip() == comm:
                    found.append(int(entry.name))
            except OSError:
                continue
        return found

    def _namespace(self) -> str | None:
        if self.process is None or self.process.poll() is not None:
            return None
        try:
            children = (
                Path(f"/proc/{self.process.pid}/task/{self.process.pid}/children")
                .read_text()
                .split()
            )
            return os.readlink(f"/proc/{children[0]}/ns/pid") if children else None
        except OSError:
            return None

    def signal_ssh(self, sig: int) -> list[int]:
        """Signal this host's SSH server: its sshd processes and the daemon accepting logins."""
        targets = self.pids("sshd") + [
            p for p in self.pids() if b"sglconsole.sim.hostd" in _cmdline(p)
        ]
        for pid in targets:
            try:
                os.kill(pid, sig)
            except ProcessLookupError:
                pass
        return targets

    def signal_all(self, sig: int) -> None:
        """Signal every process of this host (its namespace init's process group and below)."""
        if self.process and self.process.poll() is None:
            os.killpg(self.process.pid, sig)


class SimFleet:
    def __init__(
        self,
        workdir: str | os.PathLike,
        hosts: list[HostSpec],
        profiles: dict,
        *,
        ssh: str = "auto",
        namespaces: bool | None = None,
        extra_config: dict | None = None,
    ):
        self.workdir = Path(workdir).resolve()
        self.specs = hosts
        self.profiles = profiles
        self.ssh_mode = (
            ssh
            if ssh != "auto"
            else ("sshd" if os.geteuid() == 0 and shutil.which("sshd") else "asyncssh")
        )
        self.namespaces = _namespaces_work() if namespaces is None else namespaces
        self.extra_config = extra_config or {}
        self.hosts: dict[str, SimHost] = {}
        self.config_path = self.workdir / "hosts.yaml"
        self.warning: str | None = None

    # ------------------------------------------------------------ lifecycle

    def start(self, timeout: float = 60.0) -> Path:
        # generous: on a machine just booted, or busy writing a large venv, one run waited over 15 s
        self.workdir.mkdir(parents=True, exist_ok=True)
        specs = self.specs
        if not self.namespaces:
            self.warning = (
                "Linux user namespaces are not available here, so the demo runs one simulated host"
                " without isolation. Enable them with:"
                " sudo sysctl -w kernel.apparmor_restrict_unprivileged_userns=0 "
                "(Ubuntu 24.04) or kernel.unprivileged_userns_clone=1"
            )
            specs = specs[:1]
        for spec in specs:
            if spec.login_shell and self.ssh_mode == "sshd" and not self.namespaces:
                raise RuntimeError(
                    f"simulated host {spec.name}: a login shell of its own needs the host's own "
                    "mount namespace (its own /etc/passwd), and namespaces are not available"
                )
        try:
            client_key = self._client_key()
            second = random.randint(100, 250)
            for index, spec in enumerate(specs):
                address = f"127.{second}.{random.randint(0, 255)}.{index + 2}"
                self.hosts[spec.name] = self._prepare(spec, address, client_key)
            for host in self.hosts.values():
                self._launch(host)
            deadline = time.monotonic() + timeout
            for host in self.hosts.values():
                _wait_banner(host, deadline)
            self._write_config()
        except BaseException:
            self.stop()  # a fleet that cannot start leaves none of its hosts behind
            raise
        return self.config_path

    def wait_ready(self, timeout: float = 30.0) -> None:
        """Until every server left running at boot has logged SGLang's ready line."""
        deadline = time.monotonic() + timeout
        for host in self.hosts.values():
            for server in host.spec.servers:
                if server.running is None:
                    continue
                log = host.root / "logs" / f"sglang-{server.port}.log"
                while "The server is fired up and ready to roll!" not in _read(log):
                    if time.monotonic() > deadline:
                        raise RuntimeError(
                            f"{host.spec.name}:{server.port} not ready:\n{_read(log)[-1500:]}"
                        )
                    time.sleep(0.1)

    def stop(self) -> None:
        """Every host's processes ended (idempotent; safe on a fleet that only partly started)."""
        for host in self.hosts.values():
            host.signal_all(signal.SIGTERM)
        deadline = time.monotonic() + 5
        for host in self.hosts.values():
            if host.process is not None:
                try:
                    host.process.wait(max(0.1, deadline - time.monotonic()))
                except subprocess.TimeoutExpired:
                    host.signal_all(signal.SIGKILL)
                    host.process.wait()
            host.sock.close()

    def __enter__(self) -> SimFleet:
        self.start()
        return self

    def __exit__(self, *exc) -> None:
        self.stop()

    # -------------------------------------------------------------- faults

    def reboot(self, name: str, down_for: float = 0.0) -> None:
        """Every process of the host gone; SSH (and the boot servers) back after `down_for` s."""
        host = self.hosts[name]
        host.signal_all(signal.SIGKILL)
        host.process.wait()
        for path in (host.root / "sim" / "gpu").glob("*.json"):
            path.unlink(missing_ok=True)
        time.sleep(down_for)
        self._launch(host)
        _wait_banner(host, time.monotonic() + 15)

    # ------------------------------------------------------------- building

    def _client_key(self) -> Path:
        keys = self.workdir / "keys"
        keys.mkdir(exist_ok=True)
        path = keys / "id_ed25519"
        if not path.exists():
            key = asyncssh.generate_private_key("ssh-ed25519")
            key.write_private_key(str(path))
            path.chmod(0o600)
            (keys / "id_ed25519.pub").write_bytes(key.export_public_key())
        (keys / "known_hosts").touch()
        return path

    def _prepare(self, spec: HostSpec, address: str, client_key: Path) -> SimHost:
        root = create_host(
            self.workdir / spec.name,
            gpu_model=spec.gpu_model,
            gpu_count=spec.gpu_count,
            sglang_version=spec.sglang_version,
            pid_offset=spec.pid_offset,
            models=spec.models,
            sglang=spec.sglang,
        )
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((address, 0))
        sock.listen(128)
        layout = _layout_dir(self.workdir) if self.namespaces else None
        host = SimHost(
            spec, root, address, sock.getsockname()[1], layout, sock, self.ssh_mode, self.namespaces
        )
        self._host_keys(host, client_key)
        self._boot_file(host)
        return host

    def _host_keys(self, host: SimHost, client_key: Path) -> None:
        ssh = host.root / "ssh"
        key_path = ssh / "host_ed25519"
        if not key_path.exists():
            key = asyncssh.generate_private_key("ssh-ed25519")
            key.write_private_key(str(key_path))
            key_path.chmod(0o600)
        public = asyncssh.read_private_key(str(key_path)).export_public_key().decode().strip()
        with open(self.workdir / "keys" / "known_hosts", "a") as fh:
            fh.write(f"[{host.address}]:{host.port} {public}\n")
        shutil.copy(client_key.with_suffix(".pub"), ssh / "authorized_keys")
        (ssh / "sshd_config").write_text(
            f"HostKey {key_path}\nAuthorizedKeysFile {ssh / 'authorized_keys'}\n"
            "UsePAM no\nStrictModes no\n"
            "PermitRootLogin yes\nPasswordAuthentication no\nKbdInteractiveAuthentication no\n"
            "AllowTcpForwarding yes\nMaxSessions 200\nLogLevel ERROR\nClientAliveInterval 5\n"
            f"SetEnv PATH={path_env(host.root)} HOME={host.root}\n{host.spec.sshd_config_extra}"
        )

    def _boot_file(self, host: SimHost) -> None:
        import json

        boot = []
        for server in host.spec.servers:
            if server.running is None:
                continue
            profile = self.profiles[server.profile]
            env = {**server.running_env}
            if server.gpus:
                env["CUDA_VISIBLE_DEVICES"] = ",".join(map(str, server.gpus))
            start = (
                [host.python, str(Path(host.python).parent / "sglang"), "serve"]
                if server.entry == "serve"
                else [host.python, "-m", "sglang.launch_server"]
            )
            argv = [*start, *[self._fill(host, a) for a in server.running]]
            if "--port" not in server.running and server.port != 30000:
                argv += ["--port", str(server.port)]
            boot.append(
                {
                    "argv": argv,
                    "env": env,
                    "log": str(host.root / "logs" / f"sglang-{server.port}.log"),
                    "cwd": profile.get("workdir"),
                }
            )
        (host.root / "sim" / "boot.json").write_text(json.dumps(boot, indent=1))

    def _fill(self, host: SimHost, value: str) -> str:
        return value.replace("{models}", host.seen("models")).replace("{logs}", host.seen("logs"))

    def _launch(self, host: SimHost) -> None:
        fd = host.sock.fileno()
        command = [
            sys.executable,
            "-m",
            "sglconsole.sim.init",
            "--root",
            str(host.root),
            "--listen-fd",
            str(fd),
            "--ssh",
            host.ssh_mode,
        ]
        if host.namespaced:
            # --kill-child: should unshare die (its owner was SIGKILLed), the host's PID 1 dies
            # with it, and with PID 1 every process of the host
            prefix = [
                "unshare",
                "--pid",
                "--net",
                "--mount",
                "--kill-child",
                "--mount-proc",
                "--propagation",
                "private",
            ]
            if os.geteuid() != 0:
                prefix[1:1] = ["--user", "--map-root-user"]
            command = prefix + command + (["--layout", host.layout] if host.layout else [])
        if host.spec.login_shell:
            command += ["--login-shell", host.spec.login_shell]
        log = open(host.root / "sim" / "hostd.log", "ab")  # noqa: SIM115
        env = {
            **os.environ,
            "PYTHONPATH": os.pathsep.join(
                filter(None, [str(PROJECT_ROOT), os.environ.get("PYTHONPATH")])
            ),
        }
        host.process = subprocess.Popen(
            command,
            pass_fds=(fd,),
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=log,
            start_new_session=True,
            env=env,
            preexec_fn=_die_with_owner(),
        )
        log.close()

    # --------------------------------------------------------------- config

    def _write_config(self) -> None:
        keys = self.workdir / "keys"
        hosts = {}
        profiles = {}
        for name, host in self.hosts.items():
            entry = {
                "address": host.address,
                "port": host.port,
                "user": "root",
                "identity_file": str(keys / "id_ed25519"),
                "known_hosts": str(keys / "known_hosts"),
                "python": host.python,
                "connect_timeout": 5,
                "keepalive_interval": 2,
                "lock_dir": host.seen(
                    "logs"
                ),  # /tmp is shared by every simulated host on this machine
            }
            if host.spec.exec_prefix:
                entry["exec_prefix"] = host.spec.exec_prefix
            entry["servers"] = [
                {
                    "port": s.port,
                    "profile": s.profile,
                    "gpus": s.gpus,
                    "log": host.seen(f"logs/sglang-{s.port}.log"),
                    **({"launcher": s.launcher} if s.launcher != "nohup" else {}),
                }
                for s in host.spec.servers
            ]
            hosts[name] = entry
            for server in host.spec.servers:
                profiles[server.profile] = self._profile(host, self.profiles[server.profile])
        document = {"hosts": hosts, "profiles": profiles, **self.extra_config}
        header = "# Written by sglconsole's simulator for its simulated fleet (loopback only).\n"
        self.config_path.write_text(header + yaml.safe_dump(document, sort_keys=False, width=100))

    def _profile(self, host: SimHost, profile: dict) -> dict:
        out = dict(profile)
        out["python"] = host.python
        out["args"] = [self._fill(host, a) for a in profile["args"]]
        return out


def _cmdline(pid: int) -> bytes:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return b""


def _read(path: Path) -> str:
    try:
        return path.read_text(errors="replace")
    except OSError:
        return ""


def _layout_dir(workdir: Path) -> str | None:
    """A folder the private mount namespace may cover with a tmpfs (hiding nothing we need)."""
    needed = [PROJECT_ROOT, Path(sys.executable).resolve(), Path(sys.prefix), workdir, Path.home()]
    needed += [Path(getattr(sys, "_base_executable", sys.executable)).resolve()]
    for candidate in LAYOUT_CANDIDATES:
        if os.path.isdir(candidate) and not any(str(p).startswith(candidate + "/") for p in needed):
            return candidate
    return None


def _namespaces_work() -> bool:
    command = ["unshare", "--pid", "--net", "--mount", "--fork", "--mount-proc", "true"]
    if os.geteuid() != 0:
        command[1:1] = ["--user", "--map-root-user"]
    try:
        return subprocess.run(command, capture_output=True, timeout=10).returncode == 0
    except (OSError, subprocess.TimeoutExpired):
        return False


def _wait_banner(host: SimHost, deadline: float) -> None:
    while True:
        try:
            with socket.create_connection((host.address, host.port), timeout=1) as conn:
                # short: the listening socket is also ours, so a host whose SSH server died still
                # accepts the connection; only its silence and its exit tell
                conn.settimeout(0.5)
                if conn.recv(64).startswith(b"SSH-"):
                    return
        except OSError:
            pass
        if host.process and host.process.poll() is not None:
            raise RuntimeError(
                f"simulated host {host.spec.name} could not start SSH "
                f"(exit {host.process.returncode}): {_hostd_log(host)}"
            )
        if time.monotonic() > deadline:
            raise RuntimeError(
                f"simulated host {host.spec.name} did not start SSH in time "
                f"(still running): {_hostd_log(host)}"
            )
        time.sleep(0.05)


def _hostd_log(host: SimHost) -> str:
    text = _read(host.root / "sim" / "hostd.log").strip()
    return text[-2000:] if text else "(hostd.log is empty)"


def _die_with_owner():
    """preexec_fn: the host gets SIGKILL when the thread that started it dies, even by SIGKILL.

    Only for the main thread: the kernel's parent-death signal follows the creating thread, and a
    worker thread that started a fleet may end long before the fleet should."""
    import threading

    if threading.current_thread() is not threading.main_thread():
        return None
    import ctypes

    libc = ctypes.CDLL(None, use_errno=True)
    owner = os.getpid()

    def arm() -> None:
        libc.prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
        if os.getppid() != owner:  # the owner died between fork and prctl
            os._exit(1)

    return arm
