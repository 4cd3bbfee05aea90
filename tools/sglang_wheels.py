#!/usr/bin/env python3
"""Find, fetch and unpack the PyPI wheel of one SGLang release, as source to read.

The per-release tables (tools/add_sglang_release.sh) are generated from each
release's own wheel. Wheels live in ``$SGLCONSOLE_SGLANG_WHEELS`` if set, else in
the git-ignored ``.cache/sglang-wheels/`` of the checkout; a missing one is fetched
there with ``pip download --no-deps sglang==X``. A wheel is unpacked (as a zip: never
installed) into ``.cache/sglang-src/X/``, a folder laid out like site-packages::

    python3 tools/sglang_wheels.py path 0.5.17     # the wheel's path, or exit 1
    python3 tools/sglang_wheels.py fetch 0.5.17    # ... downloading it when missing
    python3 tools/sglang_wheels.py unpack 0.5.17   # the unpacked folder (fetches too)
    python3 tools/sglang_wheels.py origin 0.5.17   # "PyPI wheel NAME, sha256 HEX"

Stdlib only.
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def wheels_dir() -> Path:
    return Path(os.environ.get("SGLCONSOLE_SGLANG_WHEELS") or REPO / ".cache" / "sglang-wheels")


def wheel_path(version: str) -> Path | None:
    """The wheel of exactly `version` (sglang-X-*.whl) where one is at hand."""
    found = sorted(wheels_dir().glob(f"sglang-{version}-*.whl"))
    return found[0] if found else None


def fetch(version: str) -> Path:
    """The wheel of `version`, downloaded from PyPI (--no-deps) when it is not at hand."""
    wheel = wheel_path(version)
    if wheel is not None:
        return wheel
    target = wheels_dir()
    target.mkdir(parents=True, exist_ok=True)
    # the newer wheels are cp311 manylinux: ask for that tag whatever runs this
    subprocess.run(
        [
            sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary=:all:",
            "--python-version", "3.11", "--platform", "manylinux_2_34_x86_64",
            "--implementation", "cp", "--disable-pip-version-check", "-q",
            "-d", str(target), f"sglang=={version}",
        ],
        check=True,
    )  # fmt: skip
    wheel = wheel_path(version)
    if wheel is None:
        raise SystemExit(f"sglang_wheels: pip download left no sglang-{version}-*.whl in {target}")
    return wheel


def sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def origin(wheel: Path) -> str:
    """How a table names the wheel it was generated from (recorded in the table)."""
    return f"PyPI wheel {wheel.name}, sha256 {sha256(wheel)}"


def unpack(version: str, wheel: Path | None = None) -> Path:
    """`.cache/sglang-src/X/` holding the wheel's sglang/ and its .dist-info (once per wheel)."""
    wheel = wheel or fetch(version)
    out = REPO / ".cache" / "sglang-src" / version
    out.parent.mkdir(parents=True, exist_ok=True)
    # one unpacker at a time: test workers running in parallel must not remove each other's
    # half-unpacked folder (the lock goes with the process, however it ends)
    with open(out.parent / f".{version}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        return _unpack_locked(wheel, out)


def _unpack_locked(wheel: Path, out: Path) -> Path:
    stamp = out / ".sglconsole-wheel"
    want = origin(wheel)
    if stamp.is_file() and stamp.read_text() == want:
        return out
    if out.exists():
        shutil.rmtree(out)
    tmp = out.with_name(out.name + ".partial")
    if tmp.exists():
        shutil.rmtree(tmp)
    with zipfile.ZipFile(wheel) as zf:
        members = [
            m
            for m in zf.namelist()
            if m.startswith("sglang/") or m.split("/")[0].endswith(".dist-info")
        ]
        zf.extractall(tmp, members)
    (tmp / ".sglconsole-wheel").write_text(want)
    tmp.rename(out)
    return out


def main(argv: list[str]) -> int:
    if len(argv) != 2 or argv[0] not in ("path", "fetch", "unpack", "origin"):
        print(__doc__, file=sys.stderr)
        return 2
    command, version = argv
    if command == "path":
        wheel = wheel_path(version)
        if wheel is None:
            print(f"sglang_wheels: no sglang-{version}-*.whl in {wheels_dir()}", file=sys.stderr)
            return 1
        print(wheel)
    elif command == "fetch":
        print(fetch(version))
    elif command == "unpack":
        print(unpack(version))
    else:
        print(origin(fetch(version)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
