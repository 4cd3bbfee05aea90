#!/usr/bin/env python3
"""Write the console's table of what one SGLang release's ServerArgs refuses and asks for instead:

    python tools/gen_server_args_checks.py SRC sglconsole/data/checks/sglang-X.json --origin TEXT

SRC: an unpacked wheel (tools/sglang_wheels.py unpack X). The reading is
tools/server_args_checks.py's, the same the simulator's version table carries (each side keeps its
own copy: the simulator shares no code with the console). Stdlib only; deterministic.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
from pathlib import Path

from gen_sim_version_table import package_root, version_of  # noqa: E402 - tools/ is sys.path[0]
from server_args_checks import server_args_checks  # noqa: E402

GENERATED_BY = "tools/gen_server_args_checks.py"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("source", type=Path)
    parser.add_argument("output", type=Path)
    parser.add_argument("--origin", help="where the source came from (the wheel's name)")
    args = parser.parse_args(argv)
    pkg = package_root(args.source)
    source = pkg / "srt" / "server_args.py"
    data = {
        "generated_by": GENERATED_BY,
        "schema_version": 1,
        "sglang_version": version_of(pkg),
        "source": {
            "origin": args.origin,
            "server_args_sha256": hashlib.sha256(source.read_bytes()).hexdigest(),
        },
        "checks": server_args_checks(pkg),
    }
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text(json.dumps(data, indent=1) + "\n", encoding="utf-8")
    print(f"{args.output}: {len(data['checks'])} checks", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
