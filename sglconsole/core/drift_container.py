"""The container's side of drift (pure): image tag -> image id -> the SGLang inside, and the `run`
options that change behaviour, compared apart from SGLang's own flags.

Both sides arrive as a ContainerSide: the profile's (what a launch would run) and the running
container's (its engine's `inspect`). A value a side does not know is None and is never taken
for a difference of its own accord: unknown is not "changed".
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace

from sglconsole.core.containers import ContainerInfo

DEFAULT_SHM_BYTES = 64 * 1024**2
"""Docker's and Podman's --shm-size when none is given (64m): an unset option means this."""
PRIVATE_IPC = ("", "private", "shareable")
"""What an engine's default --ipc looks like in inspect (Docker 20.10: private or shareable by
the daemon's default-ipc-mode; Podman: private or shareable)."""
_UNITS = {"": 1, "b": 1, "k": 1024, "m": 1024**2, "g": 1024**3}


@dataclass(frozen=True, kw_only=True)
class ContainerSide:
    """What one side says of the container a server runs in."""

    engine: str | None = None
    image: str | None = None
    """The image as named (a tag)."""
    image_id: str | None = None
    """The image itself: sha256:ID (or REPO@sha256:DIGEST on the profile's side)."""
    repo_digests: tuple[str, ...] = ()
    """REPO@sha256:DIGEST names of the running image (none for an imported one)."""
    sglang_version: str | None = None
    gpus: tuple[str, ...] | None = None
    """Host GPU indices (or UUIDs), ("all",), or None (none given)."""
    shm_bytes: int | None = None
    ipc: str | None = None
    network: str | None = None
    restart: str | None = None
    volumes: tuple[str, ...] | None = None


@dataclass(frozen=True, kw_only=True)
class ContainerRow:
    """One line of the container comparison (same fields as a drift row, kind 'container')."""

    name: str
    label: str
    profile: object
    running: object
    differs: bool
    performance: bool
    note: str | None = None

    def to_dict(self) -> dict:
        return {
            "kind": "container",
            "dest": self.name,
            "flag": self.label,
            "profile": self.profile,
            "running": self.running,
            "state": "DIFFERENT" if self.differs else "SAME",
            "performance": self.performance,
            "note": self.note,
        }


def shm_bytes(size: str | int | None) -> int | None:
    """'32g' -> 34359738368, as Docker and Podman read --shm-size (binary units)."""
    if size is None:
        return None
    found = re.fullmatch(r"([0-9]+(?:\.[0-9]+)?)([bkmg]?)", str(size).strip().lower())
    return int(float(found.group(1)) * _UNITS[found.group(2)]) if found else None


def shm_text(size: int | None) -> str | None:
    if size is None:
        return None
    for unit in ("g", "m", "k"):
        if size and size % _UNITS[unit] == 0:
            return f"{size // _UNITS[unit]}{unit}"
    return f"{size}b"


def same_image(profile: ContainerSide, running: ContainerSide) -> bool | None:
    """Whether the running image is the proven one; None when the profile pins none or the
    running image's id is unknown."""
    if not profile.image_id or not running.image_id:
        return None
    pinned = profile.image_id
    if "@" in pinned:  # a repo digest: the running image carries it among its RepoDigests
        return pinned in running.repo_digests or pinned.split("@", 1)[1] == running.image_id
    return _hex(pinned) == _hex(running.image_id)


def _hex(image_id: str) -> str:
    return image_id.split(":", 1)[-1]


def short_id(image_id: str | None) -> str | None:
    if not image_id:
        return image_id
    digest = image_id.split("@", 1)[-1]
    return digest[: len("sha256:") + 12] if digest.startswith("sha256:") else digest[:12]


def compare_container(
    profile: ContainerSide | None, running: ContainerSide | None
) -> list[ContainerRow]:
    """The rows, the differences first. A profile that names a container against a process on
    the host is one row that differs; a profile that names none, against a container, is one row
    that says so without calling it drift (the profile is silent on how it runs: a relaunch would
    start a process on the host; capture writes the container in)."""
    if profile is None and running is None:
        return []
    if profile is None or running is None:
        return [
            ContainerRow(
                name="runs_in",
                label="runs in",
                profile=f"a {profile.engine} container" if profile else "no container named",
                running=f"a {running.engine} container" if running else "a process on the host",
                differs=profile is not None,
                performance=False,
                note=(
                    "a restore would start it in its container"
                    if profile
                    else "the profile names no container: a relaunch would start a process on"
                    " the host (capture HOST:PORT --as NAME writes one with its container)"
                ),
            )
        ]
    rows = [
        _row("engine", "engine", profile.engine, running.engine, performance=False),
        _row("image", "image", profile.image, _tag(running, profile), performance=True),
        _image_row(profile, running),
        _row(
            "sglang_version",
            "SGLang in the image",
            profile.sglang_version,
            running.sglang_version,
            performance=True,
        ),
        _row("gpus", "--gpus", _gpus(profile.gpus), _gpus(running.gpus), performance=True),
        _row(
            "shm_size",
            "--shm-size",
            shm_text(profile.shm_bytes if profile.shm_bytes is not None else DEFAULT_SHM_BYTES),
            shm_text(running.shm_bytes),
            performance=True,
        ),
        _ipc_row(profile.ipc, running.ipc),
        _row("network", "--network", profile.network, running.network, performance=False),
        _row(
            "restart",
            "--restart",
            profile.restart or "no",
            running.restart if running.restart != "" else "no",
            performance=False,
        ),
        _row(
            "volumes",
            "-v",
            sorted(profile.volumes) if profile.volumes is not None else None,
            sorted(running.volumes) if running.volumes is not None else None,
            performance=False,
        ),
    ]
    return sorted(rows, key=lambda row: (not row.differs, not row.performance))


def _row(name: str, label: str, profile: object, running: object, *, performance: bool):
    known = profile is not None and running is not None
    return ContainerRow(
        name=name,
        label=label,
        profile=profile,
        running=running,
        differs=known and profile != running,
        performance=performance,
        note=None if known or profile is None else "not read from the running container",
    )


def _tag(running: ContainerSide, profile: ContainerSide) -> str | None:
    """The running image's name; one started by its id (a restore of the proven image) is
    named by the profile's tag when it is that image."""
    if running.image and running.image.removeprefix("sha256:") in (running.image_id or ""):
        return profile.image if same_image(profile, running) else running.image
    return running.image


def _image_row(profile: ContainerSide, running: ContainerSide) -> ContainerRow:
    proven = same_image(profile, running)
    note = None
    if proven is None:
        note = (
            "the profile pins no image id: whatever the tag names is taken as proven"
            if not profile.image_id
            else "the running image's id is unknown"
        )
    elif not proven and profile.image == running.image:
        note = (
            f"{running.image} now names {short_id(running.image_id)}, not the proven"
            f" {short_id(profile.image_id)}: the tag was pulled (or built) again since"
        )
    return ContainerRow(
        name="image_id",
        label="image id",
        profile=short_id(profile.image_id),
        running=short_id(running.image_id),
        differs=proven is False,
        performance=True,
        note=note,
    )


def _ipc_row(profile: str | None, running: str | None) -> ContainerRow:
    row = _row("ipc", "--ipc", profile or "private", running, performance=True)
    if profile is None and running in PRIVATE_IPC:  # the engine's default, either spelling
        return replace(row, running=running or "private", differs=False)
    return row


def _gpus(gpus: tuple[str, ...] | None) -> str | None:
    return None if gpus is None else ",".join(sorted(gpus)) or None


def running_side(info: ContainerInfo, version: str | None) -> ContainerSide:
    """The running container's side, from its engine's inspect (VERSION: the SGLang inside, as
    the server itself says)."""
    options = info.options
    return ContainerSide(
        engine=info.engine,
        image=info.image,
        image_id=info.image_id,
        repo_digests=info.repo_digests or (),
        sglang_version=version,
        gpus=options.gpus,
        shm_bytes=options.shm_size,
        ipc=options.ipc,
        network="bridge" if options.network == "default" else options.network,
        restart=info.restart_policy,
        volumes=options.volumes,
    )
