"""The tier that runs SGLang's own 0.5.23 parser (built by tools/real_sglang_venv.sh; ./dev test
builds it)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
DEFAULT = REPO / ".cache" / "real-sglang-0.5.23" / "bin" / "python"


@pytest.fixture(scope="session")
def real_python() -> str:
    python = Path(os.environ.get("SGLCONSOLE_REAL_SGLANG_PYTHON", DEFAULT))
    if not python.exists():
        pytest.fail(
            f"the real-SGLang venv is missing ({python}): "
            "run tools/real_sglang_venv.sh (./dev test does)"
        )
    return str(python)
