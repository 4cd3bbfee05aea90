"""Small stdlib-only programs run on hosts as `python -c SOURCE JSON` (see source())."""

from __future__ import annotations

import re
from functools import cache
from pathlib import Path

# `from NAME import ...  # inlined by source()`: a part kept in a file of its own (a module under
# 400 lines) that the host gets inside the one program it runs
_INLINED = re.compile(r"^from (\w+) import .*# inlined by source\(\)$", re.MULTILINE)


@cache
def source(name: str) -> str:
    text = (Path(__file__).parent / f"{name}.py").read_text()
    return _INLINED.sub(lambda found: source(found.group(1)), text)
