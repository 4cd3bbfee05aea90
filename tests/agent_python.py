"""The interpreter a test runs a host agent with, as a host would: the system's python3 (an
agent must run without the console's venv), else this one."""

from __future__ import annotations

import os
import sys

SYSTEM_PYTHON = "/usr/bin/python3"


def agent_python() -> str:
    return SYSTEM_PYTHON if os.access(SYSTEM_PYTHON, os.X_OK) else sys.executable
