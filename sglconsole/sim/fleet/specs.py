"""What a simulated host is made of: its GPUs, its SGLang, the servers running at boot."""

from __future__ import annotations

from dataclasses import dataclass, field


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
    """How the running server was started: `python -m sglang.launch_server` or
    "serve" (`sglang serve`)."""
    container: str | None = None
    """"docker" or "podman": the server runs at boot in a container of the host's engine of
    that kind (named sglang-PORT, image lmsysorg/sglang:latest, host network), not by hostd."""


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
    units: dict[str, str] = field(default_factory=dict)
    """systemd units the host has (name -> text; `{python}`, `{models}`, `{logs}` become the
    host's paths): in its own /etc/systemd/system, or in ~/.config/systemd/user where the host
    has no mount namespace (and so no /etc of its own)."""
    files: dict[str, str] = field(default_factory=dict)
    """Files the host has before it boots (path under its root -> text, `{models}` and `{logs}`
    filled), e.g. a server's `--config` YAML at "models/qwen8b.yaml"."""
    weight_cache: dict | None = None
    """A standalone weight-cache daemon running at boot (SGLang 0.5.17+), e.g.
    {"model": "Qwen3-8B", "gpus": [0], "tp": 1}: it holds the model's weights on those GPUs."""
    engines: tuple[str, ...] = ()
    """Container engines the host has ("docker", "podman"): each private to the host, started
    in its namespaces after it boots (sim/fleet/engines.py). Where this machine cannot run one,
    the fleet starts without it and says why (SimFleet.notes)."""
    login_shell: str | None = None
    """The SSH user's login shell on this host (e.g. /usr/bin/tcsh): with sshd, root's entry in
    the host's own /etc/passwd (bound over it in the host's mount namespace only)."""
