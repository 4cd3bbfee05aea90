"""Lines that are no batch line: the ready line, start-up milestones and errors.

See ``MILESTONES`` and ``ERROR_CLASSES`` for what is recognised. Milestones
carry what they report in ``extra``: memory in GB (``avail_mem``, ``mem_usage``,
``k_size`` ...), durations in seconds (``elapsed``), ``url``/``port`` of the
Uvicorn line, ``graph`` of a non-CUDA graph capture; errors that name an
exception carry ``exception_type``.
"""

from __future__ import annotations

import re
from typing import Any

from sglconsole.core.sglang_log.prefix import parse_header
from sglconsole.core.sglang_log.record import LogRecord, new_record
from sglconsole.core.sglang_log.values import guess_value, key_name

__all__ = ["ERROR_CLASSES", "MILESTONES", "event_record"]

#: milestone names, in the order a healthy start-up logs them
MILESTONES = (
    "dist_init_begin",
    "dist_init_end",
    "weights_begin",
    "weights_loaded",
    "kv_cache",
    "mamba_cache",
    "memory_pool_end",
    "cuda_graph_begin",
    "cuda_graph_end",
    "max_total_num_tokens",
    "uvicorn_running",
)

#: error classes, most specific first
ERROR_CLASSES = (
    "cuda_oom",
    "not_enough_memory",
    "address_in_use",
    "unrecognized_arguments",
    "invalid_argument",
    "nccl",
    "watchdog",
    "health_check",
    "child_failed",
    "init_failed",
    "killed",
    "traceback",
    "exception",
    "error_log",
)

# Cheap rejection. SGLang lines ("[time tags] message") are kept when the message
# starts with a milestone/ready/error phrase or mentions an error word; any other
# line (tracebacks, argparse, raw prints, foreign prefixes) when it contains one
# of the words every milestone, ready or error line has.
_MESSAGE_PREFIXES = (
    "Load weight", "KV Cache", "Mamba Cache", "Memory pool end", "max_total_num_tokens=",
    "Capture ", "Init torch distributed", "Init parallel", "The server is fired up",
    "INFO:     Uvicorn running", "Uvicorn running", "Received sigquit", "Health check failed",
    "Traceback", "Killed", "Rank ",
    "Initialization failed", "Not enough memory", "Port is already in use",
)  # fmt: skip
_BRACKET_WORDS = (
    "rror", "xception", "ERROR", "atchdog", "Traceback", "Cache is allocated", "VA upper bound",
    "out of memory", "ealth check failed", "in use",
)  # fmt: skip
_LOOSE_WORDS = _BRACKET_WORDS + (
    "fired up", "Load weight", "Memory pool end", "max_total_num_tokens=", "graph begin",
    "graph end", "Uvicorn running", "torch distributed", "Init parallel", "Killed", "NCCL",
    "sigquit",
    "Initialization failed", "Not enough memory", "died during initialization",
)  # fmt: skip

_ERROR_CHECKS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("cuda_oom", re.compile(r"CUDA out of memory|OutOfMemoryError|CUDA error: out of memory")),
    ("not_enough_memory", re.compile(r"Not enough memory\. Please try to increase --mem-fraction")),
    (
        "address_in_use",
        re.compile(r"(?i:address already in use)|\[Errno 98\]|Port is already in use"),
    ),
    ("unrecognized_arguments", re.compile(r"error: unrecognized arguments")),
    (
        "invalid_argument",
        re.compile(r"error: argument \S+: |error: the following arguments are required"),
    ),
    (
        "nccl",
        re.compile(r"NCCL error|nccl\w*Error|NCCL WARN|NCCL timeout|WorkNCCL|ProcessGroupNCCL"),
    ),
    ("watchdog", re.compile(r"[Ww]atchdog timeout")),
    ("health_check", re.compile(r"(?i:health ?check failed)")),
    (
        "child_failed",  # 0.4.3 wrote "proces."
        re.compile(r"Received sigquit from a child proces|scheduler died during initialization"),
    ),
    ("init_failed", re.compile(r"Initialization failed\.")),
    ("killed", re.compile(r"Killed\Z")),
    ("traceback", re.compile(r"Traceback \(most recent call last\)")),
    (
        "exception",
        re.compile(
            r"(?:[A-Za-z_][\w.]*\.)?(?:[A-Z]\w*(?:Error|Exception)|Exception|Error)(?::|\Z)"
        ),
    ),
    ("error_log", re.compile(r"ERROR:\s")),
)
# the classes that must start the message; the others may appear anywhere in it
_ANCHORED = frozenset({"exception", "error_log", "killed"})

# "Init torch distributed begin/ends" until 0.5.20, "Init parallel begin/ends" from 0.5.21
# (srt/distributed/bootstrap.py); from 0.5.23 the KV line reads "VA upper bound" after capture
_MILESTONE_RE = re.compile(
    r"(?P<dist_init_begin>Init (?:torch distributed|parallel) begin)"
    r"|(?P<dist_init_end>Init (?:torch distributed|parallel) ends)"
    r"|(?P<weights_begin>Load weight begin)"
    r"|(?P<weights_loaded>Load weight end)"
    r"|(?P<kv_cache>KV Cache (?:is allocated|VA upper bound))"
    r"|(?P<mamba_cache>Mamba Cache is allocated)"
    r"|(?P<memory_pool_end>Memory pool end)"
    r"|(?P<cuda_graph_begin>Capture (?:[\w ]+ )?(?:cuda|[A-Z]+) graph begin)"
    r"|(?P<cuda_graph_end>Capture (?:[\w ]+ )?(?:cuda|[A-Z]+) graph end)"
    r"|(?P<max_total_num_tokens>max_total_num_tokens=)"
    r"|(?P<uvicorn_running>Uvicorn running on)"
)
_CAPTURE_RE = re.compile(r"Capture ([\w ]+) (?:cuda|[A-Z]+) graph (?:begin|end)")
_READY = "The server is fired up and ready to roll"
_LEVEL_RE = re.compile(r"(?:INFO|WARNING|DEBUG):\s+")
_KV_EQ_RE = re.compile(
    r"([A-Za-z_][\w ]*?)\s*=\s*(\[[^\]]*\]|[^,=]+?)(?=,|\.\s|\.?\s*$|\s+[A-Za-z_][\w ]*=)"
)
_KV_COLON_RE = re.compile(
    r"(#?[A-Za-z][\w #-]*?):\s*([^,]+?)(?=,|\.\s|\.?\s*$|\s+#?[A-Za-z_][\w -]*:\s)"
)
_QUANTITY_RE = re.compile(r"(-?[0-9]+(?:\.[0-9]+)?)\s*(GB|GiB|MB|s|ms)?\.?")
_URL_RE = re.compile(r"(https?://\S+?)(?::([0-9]+))?(?=[\s(]|$)")
_KEY_ALIASES = {"time_elapsed": "elapsed"}  # old "Time elapsed: 1.2 s", new "elapsed=1.2 s"


def _quantity(text: str) -> Any:
    """``'13.56 GB'`` -> 13.56 (GB), ``'12.96 s'`` -> 12.96 (seconds), ``'8192'`` -> 8192."""
    stripped = text.strip().rstrip(".")
    found = _QUANTITY_RE.fullmatch(stripped)
    if found is None:
        return guess_value(stripped)
    number, unit = found.groups()
    if unit is None:
        return int(number) if "." not in number else float(number)
    amount = float(number)
    if unit == "MB":
        amount /= 1024
    elif unit == "ms":
        amount /= 1000
    return amount


def _milestone_extra(name: str, message: str) -> dict[str, Any]:
    extra: dict[str, Any] = {}
    if name == "uvicorn_running":
        url = _URL_RE.search(message)
        if url is not None:
            extra["url"] = url.group(1) + (":" + url.group(2) if url.group(2) else "")
            if url.group(2):
                extra["port"] = int(url.group(2))
        return extra
    if name.startswith("cuda_graph_"):
        capture = _CAPTURE_RE.search(message)
        if capture is not None and capture.group(1) != "cuda":
            extra["graph"] = capture.group(1)
    for key, value in _KV_EQ_RE.findall(message):
        name_in_extra = key_name(key)
        extra[_KEY_ALIASES.get(name_in_extra, name_in_extra)] = _quantity(value)
    if name in ("kv_cache", "mamba_cache", "cuda_graph_end"):
        body = message.split(". ", 1)[1] if ". " in message else message
        for key, value in _KV_COLON_RE.findall(body):
            name_in_extra = key_name(key)
            name_in_extra = _KEY_ALIASES.get(name_in_extra, name_in_extra)
            if name_in_extra not in extra:
                extra[name_in_extra] = _quantity(value)
    return extra


def _worth_classifying(text: str) -> bool:
    """The cheap rejection: False for lines that cannot be a ready, milestone or error line."""
    if text[:1] == "[" and (bracket_end := text.find("] ")) > 0:
        if text.startswith(_MESSAGE_PREFIXES, bracket_end + 2):
            return True
        return any(word in text for word in _BRACKET_WORDS)
    return any(word in text for word in _LOOSE_WORDS)


def event_record(text: str) -> LogRecord | None:
    """The ready, milestone or error record of a line, or None."""
    if not _worth_classifying(text):
        return None
    header, start = parse_header(text, len(text))
    if start == 0 and text[:1] in (" ", "\t"):
        return None  # a traceback frame or source line; the "Traceback" and "XxxError:" lines count
    message = text[start:].strip()
    if not message:
        return None
    when, dp_rank, tp_rank, pp_rank, ep_rank, header_extra = header
    ranks = {"dp_rank": dp_rank, "tp_rank": tp_rank, "pp_rank": pp_rank, "ep_rank": ep_rank}
    extra = {} if header_extra is None else dict(header_extra)
    for name, pattern in _ERROR_CHECKS:
        found = pattern.match(message) if name in _ANCHORED else pattern.search(message)
        if found is not None:
            if name == "exception":
                exception = message[: found.end()].rstrip(":").rsplit(".", 1)[-1]
                extra["exception_type"] = exception
            return new_record("error", time=when, **ranks, message=message, error=name, extra=extra)
    level = _LEVEL_RE.match(message)
    if level is not None:
        message = message[level.end() :]
    if _READY in message:
        return new_record("ready", time=when, **ranks, message=message, extra=extra)
    milestone = _MILESTONE_RE.search(message)
    if milestone is not None:
        name = milestone.lastgroup or ""
        extra.update(_milestone_extra(name, message))
        return new_record(
            "milestone", time=when, **ranks, message=message, milestone=name, extra=extra
        )
    return None
