"""A failed ``nvidia-smi`` run as one line a human can act on (pure, stdlib only)."""

from __future__ import annotations

import re

__all__ = ["classify_nvidia_smi_error"]

_ANSI_RE = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")
_FIELD_RE = re.compile(r'Field "([^"]*)" is not a valid field to query')
_NO_DRIVER = "NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver."
_NO_HANDLE = "Unable to determine the device handle"


def _one_line(text: str, limit: int = 200) -> str:
    text = _ANSI_RE.sub("", text)
    text = " ".join(text.split())
    if len(text) > limit:
        text = text[: limit - 1] + "…"
    return text


def _first_line(text: str) -> str:
    for line in _ANSI_RE.sub("", text).splitlines():
        if line.strip():
            return line.strip()
    return ""


def classify_nvidia_smi_error(stdout: str, stderr: str, exit_code: int | None) -> str | None:
    """A one-line human message for a failed ``nvidia-smi`` run, or None if it succeeded.

    ``exit_code`` None means the run did not finish (timed out / was killed by us).
    """
    try:
        return _classify(stdout or "", stderr or "", exit_code)
    except Exception:  # noqa: BLE001 - fuzz-safe by contract
        return f"nvidia-smi failed (exit {exit_code})"


def _classify(stdout: str, stderr: str, exit_code: int | None) -> str | None:
    if not isinstance(stdout, str):
        stdout = str(stdout)
    if not isinstance(stderr, str):
        stderr = str(stderr)
    if exit_code == 0:
        return None
    both = f"{stdout}\n{stderr}"
    if exit_code is None:
        return "nvidia-smi did not answer in time (hung or killed)"
    if "couldn't communicate with the NVIDIA driver" in both:
        return f"NVIDIA driver not loaded: {_one_line(_NO_DRIVER)} (exit {exit_code})"
    if "No devices were found" in both:
        return f"no GPU visible: No devices were found (exit {exit_code})"
    field_match = _FIELD_RE.search(both)
    if field_match:
        field = _one_line(field_match.group(1), 80)
        return f'nvidia-smi rejected query field "{field}" (not a valid field, exit {exit_code})'
    if "Driver/library version mismatch" in both:
        return (
            "NVML driver/library version mismatch (driver updated, reboot needed?) "
            f"(exit {exit_code})"
        )
    if _NO_HANDLE in both:
        line = next((text.strip() for text in both.splitlines() if _NO_HANDLE in text), "")
        return f"GPU unreachable: {_one_line(line, 160)} (exit {exit_code})"
    if exit_code == 127 or "command not found" in both or "No such file or directory" in both:
        return f"nvidia-smi not found on the host (exit {exit_code})"
    if exit_code == 126:
        return "nvidia-smi is not executable (permission denied, exit 126)"
    if "Invalid combination of input arguments" in both or "is not recognized" in both:
        first = _one_line(_first_line(both), 160)
        return f"nvidia-smi rejected its arguments: {first} (exit {exit_code})"
    if exit_code < 0:
        return f"nvidia-smi was killed by signal {-exit_code}"
    detail = _first_line(stderr) or _first_line(stdout)
    if detail:
        return f"nvidia-smi failed (exit {exit_code}): {_one_line(detail, 160)}"
    return f"nvidia-smi failed (exit {exit_code})"
