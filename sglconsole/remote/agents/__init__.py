"""Small stdlib-only programs run on hosts as `python -c SOURCE JSON` (see source())."""

from __future__ import annotations

from functools import cache
from pathlib import Path


@cache
def source(name: str) -> str:
    return (Path(__file__).parent / f"{name}.py").read_text()
