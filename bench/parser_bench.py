"""Benchmark ``sglconsole.core.sglang_log.parse_line`` against SGLang's own decode regex.

    python bench/parser_bench.py [--lines N] [--format 0.5.23|legacy] [--json]
                                 [--sglang-python PATH] [--seed S] [--repeat R]
                                 [--mixed-lines N]

Generates N realistic log lines (about 70 % decode lines with accept len, plus
prefill lines, SGLang info lines and uvicorn access lines) and times
``parse_line`` over them. When SGLang is importable (``from
sglang.srt.debug_utils.log_parser import _PATTERN_DECODE``), or in the
interpreter ``--sglang-python`` names (default: the venv of
``tools/real_sglang_venv.sh``, ``.cache/real-sglang-0.5.23``, if it exists), the
same lines also go through that regex the way SGLang's ``log_parser.parse``
applies it (a search per line with the groups extracted; it uses polars'
``str.extract_groups``, here ``re.search`` + ``groupdict``), and through a bare
``re.search``. Rates and ratios are printed; ``--json`` gives them as a dict
(``parse_line_lines_per_s``, ``sglang_regex_lines_per_s``, ``parser_vs_sglang_regex``).

``--format 0.5.23`` (default) writes decode lines as SGLang 0.5.23 does, without
a comma after ``#queue-req: N``; SGLang's regex wants that comma, so it matches
none of those lines and spends its time failing. ``--format legacy`` appends the
``", "`` older versions wrote, so the regex matches every decode line: the
harder comparison. The output reports how many lines each side extracted.

The mixed-layout case (``--mixed-lines``, 0 to skip) times ``parse_line`` over the
Decode/Prefill lines of every log in ``tests/data/sglang_logs`` (SGLang 0.2 to
0.5.x, some twenty key layouts) interleaved line by line, the way a console
tailing a fleet of mixed versions meets them, and counts the layouts compiled
(``mixed_lines_per_s``, ``mixed_vs_single_layout``, ``mixed_layouts_compiled``).
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import random
import sys
import tempfile
import time
from datetime import datetime, timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench import checks  # noqa: E402
from bench.sglang_regex import (  # noqa: E402
    NO_REGEX,
    best_of,
    default_sglang_python,
    regex_python,
    sglang_pattern_here,
    time_regex,
)
from sglconsole.core.sglang_log import parse_line  # noqa: E402
from sglconsole.core.sglang_log import shapes as sglang_log_shapes  # noqa: E402

SGLANG_LOGS = ROOT / "tests" / "data" / "sglang_logs"
SCRIPT = "bench/parser_bench.py"
PROMISES: checks.Promises = {
    # key printed (--json) -> the count that proves it measured (bench.checks)
    "parse_line_lines_per_s": "parse_line_records",
    "sglang_regex_lines_per_s": "sglang_regex_seconds",
    "parser_vs_sglang_regex": "sglang_regex_seconds",
    "parser_vs_sglang_regex_search_only": "sglang_regex_seconds",
    "mixed_lines_per_s": "mixed_lines",
    "mixed_vs_single_layout": "mixed_lines",
    "mixed_layouts_compiled": "mixed_layouts_compiled",  # 0: the counting hook saw nothing
}
SMALLEST = {"lines": 20_000, "mixed_lines": 5_000, "repeat": 1}
HOOKS = (  # what the mixed-layout case counts compiled layouts with
    "sglconsole.core.sglang_log.shapes:compile_shape",
    "sglconsole.core.sglang_log.shapes:forget_shapes",
)


def generate(n: int, fmt: str = "0.5.23", seed: int = 0) -> list[str]:
    """N log lines of a busy TP=4 speculative-decoding server (only TP0 logs stats), in time order.

    Line formats follow SGLang 0.5.23 (scheduler_components/metrics_reporter.py,
    uvicorn access log); ``legacy`` adds the trailing ``", "`` of older versions.
    """
    rnd = random.Random(seed)
    t = datetime(2026, 5, 1, 9, 0, 0)
    tail = ", " if fmt == "legacy" else ""
    out: list[str] = []
    running = 24
    tokens = 200_000
    while len(out) < n:
        t += timedelta(seconds=rnd.choice((0, 1)))
        ts = t.strftime("%Y-%m-%d %H:%M:%S")
        r = rnd.random()
        if r < 0.70:
            running = max(0, min(256, running + rnd.randint(-3, 3)))
            tokens = max(0, tokens + rnd.randint(-4000, 5000))
            out.append(
                f"[{ts} TP0] Decode batch, #running-req: {running}, #token: {tokens}, "
                f"token usage: {min(tokens / 900_000, 1):.2f}, "
                f"accept len: {rnd.uniform(1.5, 3.9):.2f}, "
                f"accept rate: {rnd.uniform(0.3, 0.95):.2f}, "
                f"cuda graph: {rnd.random() < 0.97}, "
                f"gen throughput (token/s): {rnd.uniform(80, 4000):.2f}, "
                f"#queue-req: {rnd.choice((0, 0, 0, 1, 5))}{tail}"
            )
        elif r < 0.80:
            out.append(
                f"[{ts} TP0] Prefill batch, #new-seq: {rnd.randint(1, 8)}, "
                f"#new-token: {rnd.randint(16, 8192)}, #cached-token: {rnd.randint(0, 60000)}, "
                f"token usage: {rnd.random():.2f}, #running-req: {running}, "
                f"#queue-req: {rnd.randint(0, 9)}, "
                f"#pending-token: {rnd.choice((0, 0, rnd.randint(1, 9000)))}, "
                "cuda graph: False, "
                f"input throughput (token/s): {rnd.uniform(100, 40000):.2f}{tail}"
            )
        elif r < 0.95:
            port = rnd.randint(30000, 60000)
            path = rnd.choice(("/v1/chat/completions", "/generate", "/health", "/metrics"))
            method = "GET" if path in ("/health", "/metrics") else "POST"
            out.append(f'[{ts}] INFO:     127.0.0.1:{port} - "{method} {path} HTTP/1.1" 200 OK')
        else:
            out.append(
                rnd.choice(
                    (
                        f"[{ts}] Receive: obj=GenerateReqInput("
                        f"rid='{rnd.getrandbits(64):x}', text='...')",
                        f"[{ts} TP0] Cache flushed successfully!",
                        f"[{ts}] Endpoint '/get_model_info' is deprecated "
                        "and will be removed in a future version.",
                    )
                )
            )
    return out[:n]


def mixed_layout_lines(n: int) -> list[str]:
    """N batch lines of every fixture log, interleaved round-robin (one line of each in turn)."""
    per_log = []
    for path in sorted(SGLANG_LOGS.glob("*.log")):
        text = path.read_text(encoding="utf-8", errors="replace")
        batch = [ln for ln in text.splitlines() if "Decode batch" in ln or "Prefill batch" in ln]
        if batch:
            per_log.append(batch)
    if not per_log:
        return []
    cycles = [itertools.cycle(lines) for lines in per_log]
    return [next(cycle) for cycle in itertools.islice(itertools.cycle(cycles), n)]


def time_mixed_layouts(lines: list[str], repeat: int) -> tuple[float, int]:
    """Best-of-``repeat`` seconds over ``lines`` from a cold start, and the layouts compiled."""
    compiled = 0
    real_compile = sglang_log_shapes.compile_shape

    def counting_compile(*args):
        nonlocal compiled
        compiled += 1
        return real_compile(*args)

    best = float("inf")
    sglang_log_shapes.compile_shape = counting_compile
    try:
        for _ in range(repeat):
            sglang_log_shapes.forget_shapes()
            compiled = 0
            start = time.perf_counter()
            for line in lines:
                parse_line(line)
            best = min(best, time.perf_counter() - start)
    finally:
        sglang_log_shapes.compile_shape = real_compile
    return best, compiled


def time_parser(lines: list[str], repeat: int) -> tuple[float, int]:
    best = None
    n = 0
    for _ in range(repeat):
        parse = parse_line
        t0 = time.perf_counter()
        n = 0
        for line in lines:
            if parse(line) is not None:
                n += 1
        dt = time.perf_counter() - t0
        best = dt if best is None else min(best, dt)
    return best or 0.0, n


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--lines", type=int, default=1_000_000)
    ap.add_argument("--format", choices=("0.5.23", "legacy"), default="0.5.23")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--repeat", type=int, default=3, help="best of R timed passes")
    ap.add_argument(
        "--sglang-python",
        help="interpreter with sglang installed, for the regex timing (default: this one if it"
        " imports sglang, else .cache/real-sglang-0.5.23/bin/python"
        " or $SGLCONSOLE_REAL_SGLANG_VENV)",
    )
    ap.add_argument(
        "--mixed-lines",
        type=int,
        default=200_000,
        help="lines of the interleaved mixed-layout case (0: skip it)",
    )
    ap.add_argument("--json", action="store_true")
    args = checks.parse(ap, SMALLEST, argv)
    checks.require_hooks(SCRIPT, HOOKS)
    if regex_python(args.sglang_python) is None:
        checks.fail(SCRIPT, "parser_vs_sglang_regex", NO_REGEX)

    lines = generate(args.lines, args.format, args.seed)
    decode_lines = sum(1 for ln in lines if "Decode batch" in ln)
    parse_line(lines[0])  # warm the caches the way a long-running tail would be
    sglang_python = args.sglang_python
    if sglang_python is None and sglang_pattern_here() is None:
        sglang_python = default_sglang_python()
    path = None
    if sglang_python:
        with tempfile.NamedTemporaryFile("w", suffix=".log", delete=False, encoding="utf-8") as f:
            f.write("\n".join(lines) + "\n")
            path = f.name
    # the two sides take turns, so that load on the machine hits both alike; best of each
    p_sec, p_records, rx = float("inf"), 0, None
    try:
        for _ in range(args.repeat):
            sec, p_records = time_parser(lines, 1)
            p_sec = min(p_sec, sec)
            rx = best_of(rx, time_regex(lines, 1, sglang_python, path))
    finally:
        if path:
            os.unlink(path)

    mixed = mixed_layout_lines(args.mixed_lines) if args.mixed_lines > 0 else []
    mixed_sec, mixed_compiled = time_mixed_layouts(mixed, args.repeat) if mixed else (0.0, 0)

    n = len(lines)
    gd = rx["groupdict"] if rx else None
    so = rx["search"] if rx else None
    result = {
        "lines": n,
        "format": args.format,
        "decode_lines": decode_lines,
        "sglang_python": sglang_python or (sys.executable if rx else None),
        "parse_line_seconds": p_sec,
        "parse_line_lines_per_s": n / p_sec if p_sec else None,
        "parse_line_records": p_records,
        # search + groupdict per line: the regex finding and extracting its fields, as
        # SGLang's log_parser.parse does (polars str.extract_groups)
        "sglang_regex_seconds": gd["seconds"] if gd else None,
        "sglang_regex_lines_per_s": n / gd["seconds"] if gd and gd["seconds"] else None,
        "sglang_regex_matches": gd["matches"] if gd else None,
        "parser_vs_sglang_regex": gd["seconds"] / p_sec if gd and p_sec else None,
        # search alone (match/no match, nothing extracted)
        "sglang_regex_search_only_lines_per_s": n / so["seconds"] if so and so["seconds"] else None,
        "parser_vs_sglang_regex_search_only": so["seconds"] / p_sec if so and p_sec else None,
        # interleaved batch lines of ~20 SGLang versions' layouts (a mixed-version fleet)
        "mixed_lines": len(mixed),
        "mixed_lines_per_s": len(mixed) / mixed_sec if mixed_sec else None,
        "mixed_us_per_line": mixed_sec / len(mixed) * 1e6 if mixed_sec else None,
        "mixed_vs_single_layout": (len(mixed) / mixed_sec) / (n / p_sec)
        if mixed_sec and p_sec
        else None,
        "mixed_layouts_compiled": mixed_compiled if mixed else None,
    }
    promised = (
        PROMISES
        if args.mixed_lines > 0
        else {key: why for key, why in PROMISES.items() if not key.startswith("mixed_")}
    )
    checks.check(SCRIPT, result, promised)
    if args.json:
        print(json.dumps(result, indent=2))
        return 0
    print(
        f"{len(lines):,} lines ({decode_lines:,} decode, format {args.format}), "
        f"best of {args.repeat}"
    )
    print(
        f"parse_line:   {result['parse_line_lines_per_s']:>12,.0f} lines/s  ({p_records:,} records)"
    )
    if mixed:
        print(
            f"mixed layouts: {result['mixed_lines_per_s']:>11,.0f} lines/s"
            f"  ({len(mixed):,} interleaved batch lines, {result['mixed_us_per_line']:.2f} us/line,"
            f" {mixed_compiled} layouts compiled)"
        )
    if rx is None:
        print("sglang regex: not measured (sglang not importable; pass --sglang-python PATH)")
    else:
        print(
            f"sglang regex: {result['sglang_regex_lines_per_s']:>12,.0f} lines/s"
            f"  search+groupdict ({gd['matches']:,} decode lines matched)"
        )
        print(
            f"              {result['sglang_regex_search_only_lines_per_s']:>12,.0f} lines/s"
            "  search only"
        )
        print(
            f"ratio (parse_line speed / regex speed): {result['parser_vs_sglang_regex']:.2f}x"
            f" ({result['parser_vs_sglang_regex_search_only']:.2f}x vs search only)"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
