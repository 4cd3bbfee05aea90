"""A simulated host's own, offline SGLang index: one wheel per release the simulator serves
(`sglang-X-py3-none-any.whl`, the same simulated package a host's env has, for release X) in
ROOT/wheels, and the host user's pip configuration (HOME is the host's root) pointing pip there
with no other index. So `python -m venv NEW && NEW/bin/python -m pip install sglang==X` on the
host makes a venv whose `sglang` is release X, with the host's own pip, and nothing leaves it."""

from __future__ import annotations

import base64
import hashlib
import zipfile
from pathlib import Path

PTH = "_sglsim.pth"


def _record_line(name: str, data: bytes) -> str:
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"{name},sha256={digest},{len(data)}"


def build_wheel(folder: Path, version: str, files: dict[str, str], paths: str) -> Path:
    """The wheel of simulated SGLang `version`: FILES (under the package) and the .pth PATHS."""
    info = f"sglang-{version}.dist-info"
    members = {f"sglang/{relative}": text.encode() for relative, text in sorted(files.items())}
    members[PTH] = paths.encode()
    members[f"{info}/METADATA"] = (
        f"Metadata-Version: 2.1\nName: sglang\nVersion: {version}\n"
        "Summary: SGLang, simulated (sglconsole's simulator)\n"
    ).encode()
    members[f"{info}/WHEEL"] = (
        b"Wheel-Version: 1.0\nGenerator: sglconsole-sim\nRoot-Is-Purelib: true\nTag: py3-none-any\n"
    )
    record = [_record_line(name, data) for name, data in members.items()]
    members[f"{info}/RECORD"] = ("\n".join([*record, f"{info}/RECORD,,"]) + "\n").encode()
    path = folder / f"sglang-{version}-py3-none-any.whl"
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as wheel:
        for name, data in members.items():
            wheel.writestr(name, data)
    return path


def write_index(root: Path, releases: dict[str, dict[str, str]], paths: str) -> None:
    """ROOT/wheels with a wheel per release, and ROOT/.config/pip/pip.conf pointing at it."""
    folder = root / "wheels"
    folder.mkdir(parents=True, exist_ok=True)
    for version, files in releases.items():
        build_wheel(folder, version, files, paths)
    config = root / ".config" / "pip"
    config.mkdir(parents=True, exist_ok=True)
    (config / "pip.conf").write_text(
        "# this simulated host's own SGLang index (sglconsole's simulator): offline\n"
        f"[global]\nno-index = true\nfind-links = {folder}\ndisable-pip-version-check = true\n"
    )
