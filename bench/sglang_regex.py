"""SGLang's own decode regex, timed the way its log_parser applies it, for bench/parser_bench.py:
in this interpreter when it imports sglang, else in the real-SGLang venv's
(tools/real_sglang_venv.sh, .cache/real-sglang-0.5.23, or $SGLCONSOLE_REAL_SGLANG_VENV)."""

from __future__ import annotations

import inspect
import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

NO_REGEX = (
    "SGLang's regex is not here to compare with: sglang is not importable and the real-SGLang "
    "venv is not built (tools/real_sglang_venv.sh; or --sglang-python PATH)"
)


def time_sglang_regex(pattern, lines, repeat):
    """Best-of-``repeat`` timings of ``pattern`` per line: ``search`` alone, and ``search`` +
    ``groupdict`` (finding and extracting, as SGLang's log_parser.parse does with polars'
    ``str.extract_groups``). Self-contained: its source also runs in SGLang's interpreter."""
    import re
    import time

    rx = re.compile(pattern)
    out = {}
    for mode in ("search", "groupdict"):
        best = None
        n = 0
        for _ in range(repeat):
            search = rx.search
            n = 0
            t0 = time.perf_counter()
            if mode == "search":
                for line in lines:
                    if search(line) is not None:
                        n += 1
            else:
                for line in lines:
                    m = search(line)
                    if m is not None:
                        m.groupdict()
                        n += 1
            dt = time.perf_counter() - t0
            best = dt if best is None else min(best, dt)
        out[mode] = {"seconds": best, "matches": n}
    return out


_CHILD_MAIN = """
import json, sys
from sglang.srt.debug_utils.log_parser import _PATTERN_DECODE
lines = open(sys.argv[1], encoding="utf-8").read().splitlines()
print(json.dumps(time_sglang_regex(_PATTERN_DECODE, lines, int(sys.argv[2]))))
"""


def sglang_pattern_here() -> str | None:
    try:
        from sglang.srt.debug_utils.log_parser import _PATTERN_DECODE  # type: ignore
    except Exception:
        return None
    return _PATTERN_DECODE


def default_sglang_python() -> str | None:
    """The real-SGLang venv that tools/real_sglang_venv.sh builds, when it is there."""
    venv = os.environ.get("SGLCONSOLE_REAL_SGLANG_VENV") or str(
        ROOT / ".cache" / "real-sglang-0.5.23"
    )
    py = Path(venv) / "bin" / "python"
    return str(py) if py.exists() else None


def regex_python(given: str | None = None) -> str | None:
    """The interpreter that times SGLang's regex: GIVEN, this one if it imports sglang, or the
    real-SGLang venv's; None when there is none."""
    if given:
        return given
    return sys.executable if sglang_pattern_here() is not None else default_sglang_python()


def time_regex(
    lines: list[str], repeat: int, sglang_python: str | None, path: str | None
) -> dict | None:
    """``{"search": {...}, "groupdict": {...}}`` timings of SGLang's _PATTERN_DECODE, or None.

    With ``sglang_python`` the timing runs in that interpreter over ``path`` (the same lines).
    """
    if sglang_python:
        try:
            proc = subprocess.run(
                [
                    sglang_python,
                    "-c",
                    inspect.getsource(time_sglang_regex) + _CHILD_MAIN,
                    str(path),
                    str(repeat),
                ],
                capture_output=True,
                text=True,
                timeout=3600,
            )
        except OSError as e:
            print(f"sglang regex run failed: {e}", file=sys.stderr)
            return None
        if proc.returncode != 0:
            print(f"sglang regex run failed:\n{proc.stderr.strip()[-2000:]}", file=sys.stderr)
            return None
        return json.loads(proc.stdout.strip().splitlines()[-1])
    pattern = sglang_pattern_here()
    return None if pattern is None else time_sglang_regex(pattern, lines, repeat)


def best_of(a: dict | None, b: dict | None) -> dict | None:
    if a is None or b is None:
        return a or b
    return {mode: min(a[mode], b[mode], key=lambda r: r["seconds"]) for mode in a}
