"""The pydantic models of hosts.yaml (extra keys are errors) and the validated Config."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import BeforeValidator, Field

from sglconsole.config.container import Container
from sglconsole.config.schema_types import (  # noqa: F401 - Port, Argv, ...: the models' face
    Argv,
    EnvValue,
    KnownHosts,
    Launcher,
    Model,
    Port,
    Specifier,
    _http_url,
)
from sglconsole.errors import ConfigError

NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]*$")


# --------------------------------------------------------------------- models


class BaselineLevel(Model):
    concurrency: int = Field(ge=1)
    gen_throughput: float = Field(gt=0)
    """SGLang's decode gen throughput at this concurrency, in all (as `Baseline.gen_throughput`)."""
    accept_len: float | None = None
    ttft_p50_ms: float | None = None


class Baseline(Model):
    gen_throughput: float | None = Field(default=None, gt=0)
    """Decode tok/s this profile reaches when proven: SGLang's own `gen throughput`, the median of
    its busy decode lines, in all requests at `concurrency` (never a client's tok/s). What SLOW,
    probe and restore compare with; capture and bench --save-baseline measure it."""
    accept_len: float | None = Field(default=None, gt=0)
    slow_fraction: float = Field(default=0.75, gt=0, le=1)
    """SLOW when the live median falls under this fraction of the baseline."""
    concurrency: int | None = None
    """Requests running when `gen_throughput` was measured (per request: divide by it)."""
    levels: list[BaselineLevel] = []
    measured_at: str | None = None
    sglang_version: str | None = None
    gpu_model: str | None = None
    gpu_count: int | None = None
    input_len: int | None = None
    output_len: int | None = None


class Probe(Model):
    prompt: str = "What is 2+2? Answer with one number."
    max_tokens: int = Field(default=16, ge=1)
    expect: str | None = "4"


class Canary(Model):
    """The canary: a few fixed prompts with known answers (temperature 0, a few tokens each), one
    at a time, through the SSH forward (remote.feeds.canary)."""

    interval: float = Field(default=300, ge=0)
    """Seconds between two canary runs on a server (0: no canary)."""
    timeout: float = Field(default=30, gt=0)
    """Seconds a canary answer may take before it counts as TIMEOUT."""


class Profile(Model):
    python: str = "python3"
    """Interpreter on the host that has SGLang installed."""
    args: Argv
    """Arguments after `python -m sglang.launch_server`."""
    env: dict[str, EnvValue] = {}
    workdir: str | None = None
    requires_sglang: Specifier | None = None
    baseline: Baseline | None = None
    probe: Probe = Probe()
    startup_timeout: float = Field(default=900, gt=0)
    description: str | None = None
    canary: Canary | None = None
    """The canary of this profile's servers (unset: every 300 s)."""
    container: Container | None = None
    """Run in a container (Docker or Podman) of this image, with these options."""


class Server(Model):
    port: Port
    profile: str
    gpus: list[Annotated[int, Field(ge=0)]] = []
    log: str | None = None
    """Path of the server's log on the host."""
    launcher: Launcher = "nohup"
    http_address: str = "127.0.0.1"
    """Where the server listens as seen from the SSH host (the container's address for pct)."""
    canary: Canary | None = None
    """This server's canary, over its profile's."""

    @property
    def systemd_unit(self) -> str | None:
        return self.launcher.split(":", 1)[1] if self.launcher.startswith("systemd:") else None


class HostFields(Model):
    address: str | None = None
    """An address or hostname, or a Host alias of the ssh_config (its HostName, Port, User,
    IdentityFile, ProxyJump, ... then apply)."""
    port: Port | None = None
    """Unset: the ssh_config's Port, else 22 (as with `ssh`)."""
    user: str | None = None
    """Unset: the ssh_config's User, else the local user name."""
    jump: str | None = None
    """Another host's NAME, or user@host:port (unset: the ssh_config's ProxyJump, if any)."""
    exec_prefix: Argv = []
    """argv every remote command is wrapped in, e.g. [pct, exec, "129", "--"]."""
    identity_file: str | None = None
    """Private key to log in with (unset: the ssh_config's IdentityFile, the agent, ~/.ssh/id_*);
    a passphrase-protected one is used through the ssh-agent that holds it."""
    known_hosts: KnownHosts | None = None
    """known_hosts file to verify the host key against ('none' disables checking: warned)."""
    ssh_config: str | None = None
    """OpenSSH client config read for this host (unset: ~/.ssh/config; 'none': no file)."""
    python: str = "python3"
    """Interpreter used for the console's read-only process/log watcher on the host."""
    connect_timeout: float | None = Field(default=None, gt=0)
    """Unset: the ssh_config's ConnectTimeout, else 10 s."""
    keepalive_interval: float | None = Field(default=None, gt=0)
    """Unset: the ssh_config's ServerAliveInterval, else 5 s."""
    keepalive_count_max: int | None = Field(default=None, ge=1)
    """Unset: the ssh_config's ServerAliveCountMax, else 3."""
    gpu_interval_ms: int = Field(default=1000, ge=100)
    lock_dir: str = "/tmp"
    """Where the per-server action locks live on the host (shared by every console)."""
    memory_interval: float = Field(default=10.0, ge=0)
    """Seconds between reads of the host's MemAvailable and its servers' RSS (0: not read)."""
    kernel_log: bool = True
    """Follow the kernel log (dmesg, else journalctl -k) for GPU Xid / NVRM and OOM-kill lines."""
    gpu_health_interval: float = Field(default=60.0, ge=0)
    """Seconds between nvidia-smi reads of ECC and row-remap counters (0: not read)."""

    def lock_file(self, port: int) -> str:
        """The lock an action on PORT holds (actions.lock takes it, the canary reads it)."""
        return f"{self.lock_dir.rstrip('/')}/sglconsole-{port}.lock"


class Host(HostFields):
    address: str
    servers: list[Server] = []


def _label(value: Any) -> str:
    if isinstance(value, str) and re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", value):
        return value
    raise ValueError(f"expected a Prometheus label name such as 'instance', got {value!r}")


LabelName = Annotated[
    str,
    BeforeValidator(
        _label,
        json_schema_input_type=Annotated[str, Field(pattern=r"^[A-Za-z_][A-Za-z0-9_]*$")],
    ),
]


class SourceLabels(Model):
    """Which labels of the series in Prometheus say where a number comes from. A value such as
    `10.0.0.5:30000` (Prometheus's `instance`) counts by its address part for a host and by its
    port part for a port; a host is found by its name in hosts.yaml, its `address`, or a server's
    `http_address`."""

    host: LabelName = "instance"
    """The label of SGLang's series (`sglang:*`, and `up`) that names the server's host."""
    port: LabelName = "instance"
    """The label of SGLang's series that gives the server's port."""
    gpu_host: LabelName = "instance"
    """The label of the GPU series (dcgm-exporter's `DCGM_FI_DEV_*`) that names the host (e.g.
    `Hostname`, where dcgm-exporter's own host name is the one in hosts.yaml)."""
    gpu_index: LabelName = "gpu"
    """The label of the GPU series that gives the GPU's index."""


class Source(Model):
    """Where the console reads the fleet's numbers instead of one SSH session per host."""

    prometheus: Annotated[str, BeforeValidator(_http_url)]
    """A Prometheus that scrapes SGLang's own /metrics (servers run with `--enable-metrics`),
    dcgm-exporter, and/or `sglconsole exporter`: tok/s, load, GPUs and statuses come from it
    (actions still reach their host over SSH)."""
    interval: float = Field(default=5.0, gt=0)
    """Seconds between two reads."""
    labels: SourceLabels = SourceLabels()
    """How series map to hosts.yaml's hosts, ports and GPUs (the defaults fit a plain
    `static_configs: [{targets: [HOST:PORT]}]` scrape)."""
    rate_window: float = Field(default=60, ge=1)
    """Seconds of samples Prometheus looks back over for decode tok/s (`irate` of
    `sglang:generation_tokens_total`): at least two scrape intervals."""
    ssh_hosts: int = Field(default=4, ge=1)
    """At most this many hosts watched over SSH at once: the ones looked at in the console (argv,
    logs, drift), the least recently looked at let go first."""
    ssh_idle: float = Field(default=30, ge=0)
    """Seconds a host stays watched over SSH once no longer looked at; an SSH connection an action
    opened is closed after as many idle seconds."""


class Router(Model):
    """An SGLang router (sglang-router 0.3.x or the SMG gateway) in front of some of the servers."""

    host: str | None = None
    """The SSH host it runs on (reached through an SSH port forward to `port`)."""
    port: Port | None = None
    url: str | None = None
    """Reached directly instead, e.g. http://127.0.0.1:39000."""
    servers: list[str] = []
    """The servers it fronts, as HOST:PORT."""
    worker_urls: dict[str, str] = {}
    """HOST:PORT -> the URL the router knows that worker by, where the default is wrong
    (default: http://<http_address>:PORT on the router's own host, else http://<address>:PORT)."""
    drain_timeout: float = Field(default=60, gt=0)
    """How long an action waits for a worker's running requests to finish once it is out."""
    join_timeout: float = Field(default=60, gt=0)
    """How long a worker put back may take to be listed healthy (on the gateway: its add job
    done) before the step fails and a job still running is called off."""
    canary: Canary | None = None
    """The canary asked through this router, as its clients ask (unset: every 300 s)."""
    kind: Literal["sglang-router", "smg"] | None = None
    """Which generation: sglang-router 0.3.x, or the SMG gateway (the `smg` package, 1.13);
    None: detected from its answers (remote.router.generation)."""
    admin_token: str | None = None
    """The gateway's admin bearer token, only as a reference to the operator's environment
    (`${SMG_ADMIN_TOKEN}`): resolved when a request is sent, never stored, shown masked."""
    metrics_port: Port | None = None
    """Where the router serves its Prometheus /metrics (its --prometheus-port), on its host or
    at its url's address: the breaker state and in-flight requests per worker are read there."""


class HostsFile(Model):
    hosts: dict[str, Host]
    profiles: dict[str, Profile] = {}
    routers: dict[str, Router] = {}
    defaults: HostFields | None = None
    alert_command: Argv | None = None
    source: Source | None = None


class Config:
    """A validated hosts.yaml plus where it came from."""

    def __init__(self, model: HostsFile, path: Path | None, lines: dict | None = None):
        self.model = model
        self.path = path
        self.lines = lines or {}
        """(key, key, ...) -> line in the file, for problems found after loading."""

    @property
    def identity(self) -> str | None:
        """Which fleet this is, for records kept across fleets (the audit log): the file's
        resolved path, since two fleets may both have a host called ct129 (None: no file)."""
        return str(Path(self.path).resolve()) if self.path else None

    @property
    def hosts(self) -> dict[str, Host]:
        return self.model.hosts

    @property
    def profiles(self) -> dict[str, Profile]:
        return self.model.profiles

    @property
    def routers(self) -> dict[str, Router]:
        return self.model.routers

    def host(self, name: str) -> Host:
        try:
            return self.model.hosts[name]
        except KeyError:
            known = ", ".join(self.model.hosts) or "none"
            raise ConfigError(f"unknown host {name!r} (hosts: {known})") from None

    def only(self, names: list[str]) -> Config:
        """The same file narrowed to these hosts (and the jump hosts they need), for commands
        that take host names; an unknown name is an error that lists the known ones."""
        for name in names:
            self.host(name)
        keep = set(names)
        for name in names:  # a jump host is reached through another configured host
            jump = self.model.hosts[name].jump
            if jump in self.model.hosts:
                keep.add(jump)
        hosts = {name: host for name, host in self.model.hosts.items() if name in keep}
        return Config(self.model.model_copy(update={"hosts": hosts}), self.path, self.lines)

    def find_server(self, host: str, port: int) -> Server | None:
        """The server entry on HOST:PORT, or None where hosts.yaml configures none."""
        return next((server for server in self.host(host).servers if server.port == port), None)

    def server(self, host: str, port: int) -> Server:
        server = self.find_server(host, port)
        if server is not None:
            return server
        ports = ", ".join(str(server.port) for server in self.host(host).servers) or "none"
        raise ConfigError(f"{host} has no server on port {port} (configured: {ports})")
