"""Dump one SGLang release's flag table from its unpacked wheel, stand-ins found by trying.

Run with the 0.5.23 real-SGLang venv's python (tools/gen_flag_table_overlay.sh does)::

    python tools/real_sglang_overlay/flag_table.py SRC OUT --origin TEXT

SRC (the release's wheel unpacked by tools/sglang_wheels.py) goes first on sys.path,
so ``import sglang`` is that release over the venv's torch, numpy, pydantic, ... Then:

1. discover: import ``sglang.srt.server_args``; when the import fails because of a
   third-party module (missing, or present in a version that lacks what the release
   uses), stand in for that top-level module (_sglang_import_stubs.py), forget the
   half-imported modules and try again; SGLang's own modules, torch and the standard
   library are never stood in for: a failure there stops with the traceback;
2. dump: in a fresh interpreter with exactly those stand-ins, build the parser as
   SGLang does and write the table (tools/gen_flag_table.py), naming the stand-ins
   in ``environment`` and ``stubbed_modules``.

Only modules whose absence breaks the import are stood in for: an optional import
inside ``try/except ImportError`` still finds nothing, as on a machine without it.
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import traceback
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(1, str(HERE.parent))  # tools/: gen_flag_table

import _sglang_import_stubs as stubs  # noqa: E402

TARGET = "sglang.srt.server_args"
MAX_ROUNDS = 60


def _top(name: str | None) -> str | None:
    return name.split(".")[0] if name else None


def _owner_of_file(filename: str, src: Path) -> str | None:
    """The top-level package a traceback frame's file belongs to (None: sglang/stdlib/unknown)."""
    path = Path(filename).resolve()
    if path.is_relative_to(src):
        return None
    for entry in sys.path:
        if not entry or not entry.endswith("-packages"):
            continue
        base = Path(entry).resolve()
        if path.is_relative_to(base):
            rel = path.relative_to(base).parts
            return rel[0].removesuffix(".py") if rel else None
    return None


def _missing_prefix(dotted: str) -> str:
    """The shallowest part of a dotted module name that does not exist (pkg, or pkg.sub)."""
    import importlib.util

    parts = dotted.split(".")
    for n in range(1, len(parts) + 1):
        prefix = ".".join(parts[:n])
        try:
            if importlib.util.find_spec(prefix) is None:
                return prefix
        except (ImportError, ValueError):
            return prefix
    return dotted


def culprit(exc: BaseException, src: Path) -> str | None:
    """What to stand in for so that the import gets past `exc` (None: not third-party)."""
    if isinstance(exc, ModuleNotFoundError) and exc.name:
        return _missing_prefix(exc.name)
    if isinstance(exc, ImportError) and exc.name:
        match = re.match(r"cannot import name '(\w+)' from '([\w.]+)'", str(exc))
        if match and _top(match[2]) != "sglang":
            return f"{match[2]}:{match[1]}"
        return _top(exc.name)
    if isinstance(exc, AttributeError):
        obj = getattr(exc, "obj", None)
        if isinstance(obj, type(sys)) and exc.name and _top(obj.__name__) != "sglang":
            return f"{obj.__name__}:{exc.name}"
    frames = traceback.extract_tb(exc.__traceback__)
    for frame in reversed(frames):
        owner = _owner_of_file(frame.filename, src)
        if owner:
            return owner
    return None


def _forget(names: list[str]) -> None:
    """Drop sglang's half-imported modules and what now has a stand-in (real ones stay)."""
    prefixes = ("sglang", *(n for n in names if ":" not in n))
    for key in list(sys.modules):
        if any(key == p or key.startswith(p + ".") for p in prefixes):
            del sys.modules[key]


def discover(src: Path, start: list[str]) -> list[str]:
    """Stand in for modules until ``sglang.srt.server_args`` imports; the names used."""
    import importlib

    stubs.install(start)
    for _ in range(MAX_ROUNDS):
        try:
            importlib.import_module(TARGET)
            return stubs.stubbed()
        except Exception as exc:  # noqa: BLE001 - which module it was decides what to do
            name = culprit(exc, src)
            if name is None or stubs.top(name) in stubs.NEVER or name in stubs.stubbed():
                traceback.print_exc()
                why = f"{name} cannot be stood in for" if name else "not a third-party module"
                raise SystemExit(f"flag_table: importing {TARGET} failed ({why})") from exc
            print(
                f"flag_table: standing in for {name} ({type(exc).__name__}: {exc})", file=sys.stderr
            )
            stubs.install([name])
            _forget(stubs.stubbed())
    raise SystemExit(f"flag_table: still failing after {MAX_ROUNDS} stand-ins")


def dump(src: Path, out: str, origin: str, names: list[str]) -> None:
    import gen_flag_table

    stubs.install(names)
    gen_flag_table.clean_process()
    note = (
        f"{origin}, unpacked and put first on sys.path of the CPU-only 0.5.23 real-SGLang venv "
        "(tools/real_sglang_venv.sh: torch 2.13.0+cpu, ...) by tools/gen_flag_table_overlay.sh; "
        "third-party modules its import chain needs that the venv lacks or has in another "
        "version are do-nothing stand-ins (tools/real_sglang_overlay/_sglang_import_stubs.py): "
        + (", ".join(names) if names else "none")
    )
    table = gen_flag_table.build_table(note, names)
    import sglang

    version = Path(src).name
    if sglang.__version__ != version or not Path(sglang.__file__).is_relative_to(src):
        raise SystemExit(f"flag_table: imported sglang {sglang.__version__} from {sglang.__file__}")
    gen_flag_table.write(table, out)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("src", type=Path, help="the unpacked wheel (.cache/sglang-src/X)")
    ap.add_argument("out", help="the table to write")
    ap.add_argument("--origin", required=True, help="the wheel's name and sha256")
    ap.add_argument("--stubs", help="comma-separated stand-ins (dump with exactly these)")
    args = ap.parse_args(argv)
    src = args.src.resolve()
    sys.path.insert(0, str(src))
    os.environ["PYTHONNOUSERSITE"] = "1"
    if args.stubs is not None:
        dump(src, args.out, args.origin, [n for n in args.stubs.split(",") if n])
        return 0
    names = discover(src, [])
    print(f"flag_table: stand-ins for {src.name}: {', '.join(names) or 'none'}", file=sys.stderr)
    # a fresh interpreter: nothing half-imported from the discovery survives into the dump
    cmd = [sys.executable, __file__, str(src), args.out, "--origin", args.origin]
    return subprocess.run([*cmd, "--stubs", ",".join(names)], check=False).returncode


if __name__ == "__main__":
    raise SystemExit(main())
