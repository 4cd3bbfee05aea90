"""How a container profile starts: the `docker run -d` / `podman run -d` argv, built as a list.

One rule: the command is an argv list, never a shell string (shlex.join only to show it), and
its secrets are masked wherever it is shown. The image that runs is the proven one (image_id)
when the profile names it, so a tag re-pulled since does not start in its place.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

from sglconsole.config.container import Container
from sglconsole.core.drift_container import ContainerSide, shm_bytes
from sglconsole.core.secrets import MASK, is_secret_env, mask_argv

LABEL = "sglconsole.port"
"""Every container the console starts carries its server's port as this label."""


def container_name(template: str | None, port: int) -> str:
    """The predictable name of PORT's container: sglang-PORT unless the profile names it."""
    return (template or "sglang-{port}").replace("{port}", str(port))


@dataclass(frozen=True, kw_only=True)
class ContainerRun:
    """One container launch, everything resolved: what `run` is given."""

    engine: str
    image: str
    """As named in the profile (a tag)."""
    image_id: str | None = None
    """The proven image; None: whatever the tag names when it starts."""
    name: str
    gpus: str | tuple[int, ...] | None = None
    """'all', host GPU indices, or None (no GPU option)."""
    gpus_as: str = "flag"
    """flag: --gpus / CDI devices; env: NVIDIA_VISIBLE_DEVICES (the NVIDIA runtime)."""
    shm_size: str | None = None
    ipc: str | None = None
    pid: str | None = None
    network: str = "host"
    volumes: tuple[str, ...] = ()
    env: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}))
    workdir: str | None = None
    restart: str | None = None
    extra: tuple[str, ...] = ()

    @property
    def runs(self) -> str:
        """The image reference `run` is given: the proven image where known, else the tag."""
        return self.image_id or self.image

    def options(self, port: int, *, masked: bool = False) -> list[str]:
        """The `run` options between `run -d` and the image."""
        argv = ["--name", self.name, "--label", f"{LABEL}={port}", "--network", self.network]
        if self.network != "host":  # the console reaches the server on the host's port
            argv += ["-p", f"{port}:{port}"]
        argv += gpu_options(self.engine, self.gpus, self.gpus_as)
        argv += ["--shm-size", self.shm_size] if self.shm_size else []
        argv += ["--ipc", self.ipc] if self.ipc else []
        argv += ["--pid", self.pid] if self.pid else []
        argv += ["--restart", self.restart] if self.restart else []
        for volume in self.volumes:
            argv += ["-v", volume]
        for name, value in self.env.items():
            shown = MASK if masked and value and is_secret_env(name) else value
            argv += ["-e", f"{name}={shown}"]
        argv += ["-w", self.workdir] if self.workdir else []
        return argv + (mask_argv(self.extra) if masked else list(self.extra))

    def side(self, sglang_version: str | None = None) -> ContainerSide:
        """The profile's side of the container drift comparison."""
        gpus = None if self.gpus is None else ("all",) if self.gpus == "all" else self.gpus
        return ContainerSide(
            engine=self.engine,
            image=self.image,
            image_id=self.image_id,
            sglang_version=sglang_version,
            gpus=None if gpus is None else tuple(str(index) for index in gpus),
            shm_bytes=shm_bytes(self.shm_size),
            ipc=self.ipc,
            network=self.network,
            restart=self.restart,
            volumes=self.volumes,
        )

    def runner(self, python: str) -> list[str]:
        """The argv that runs PYTHON in a throwaway container of the image, with no network: what
        preflight and drift ask the image's own SGLang through (its volumes, for model paths)."""
        volumes = [word for volume in self.volumes for word in ("-v", volume)]
        return [self.engine, "run", "--rm", "-i", "--network", "none", *volumes,
                "--entrypoint", python, self.runs]  # fmt: skip

    def argv(self, port: int, inner: tuple[str, ...], *, masked: bool = False) -> list[str]:
        """`ENGINE run -d OPTIONS IMAGE INNER`: INNER is the SGLang command inside the image."""
        command = mask_argv(inner) if masked else list(inner)
        return [self.engine, "run", "-d", *self.options(port, masked=masked), self.runs, *command]


def gpu_options(engine: str, gpus: str | tuple[int, ...] | None, given_as: str = "flag") -> list:
    """Docker's --gpus (a device list is one CSV field, so it is quoted inside the argument, as
    Docker's documentation writes it), Podman's CDI devices, or the NVIDIA runtime's variable."""
    if gpus is None or gpus == ():
        return []
    if given_as == "env":
        listed = gpus if gpus == "all" else ",".join(str(index) for index in gpus)
        return ["-e", f"NVIDIA_VISIBLE_DEVICES={listed}"]
    if engine == "podman":
        indices = ["all"] if gpus == "all" else [str(index) for index in gpus]
        return [word for index in indices for word in ("--device", f"nvidia.com/gpu={index}")]
    if gpus == "all":
        return ["--gpus", "all"]
    return ["--gpus", f'"device={",".join(str(index) for index in gpus)}"']


def container_run(
    container: Container,
    port: int,
    env: Mapping[str, str],
    gpus: tuple[int, ...],
    workdir: str | None,
) -> ContainerRun:
    """The run of CONTAINER for the server on PORT: ENV already resolved (the profile's and the
    options'), GPUS the server entry's unless the profile's options give them."""
    options = container.options
    return ContainerRun(
        engine=container.engine,
        image=container.image,
        image_id=container.image_id,
        name=container_name(options.name, port),
        gpus=options.gpus if options.gpus == "all" else tuple(options.gpus or gpus) or None,
        gpus_as=options.gpus_as,
        shm_size=options.shm_size,
        ipc=options.ipc,
        pid=options.pid,
        network=options.network,
        volumes=tuple(options.volumes),
        env=MappingProxyType(dict(env)),
        workdir=workdir,
        restart=options.restart,
        extra=tuple(options.extra),
    )
