#!/usr/bin/env python3
"""Extract what a SGLang version serves and logs, as the simulator's version table.

Reads a SGLang source tree (a git checkout, whose package is under python/,
or an unpacked wheel / site-packages folder) without importing it, and
writes facts, never code::

    python tools/gen_sim_version_table.py SRC sglconsole/sim/versions/sglang-0.5.12.json \\
        --origin "PyPI wheel sglang-0.5.12-...whl" [--commit SHA]

What it records (all read from the source with ``ast``):

* ``serve_cli`` / ``launch_server_warning``: whether ``sglang serve`` exists, and
  (``serve_positional_model``) whether it takes the model path as a positional argument, and
  the warning ``python -m sglang.launch_server`` then prints (its line and text);
* ``routes``: every path the HTTP server registers (``@app.get`` / ``post`` /
  ``api_route`` in entrypoints/http_server.py, plus the ``@router`` routes of
  modules it ``include_router``s), with methods; aliases that log a deprecation
  warning (and its text) or answer 404 with a deprecation message;
* ``metrics_mount``: the path the Prometheus app is mounted at (--enable-metrics);
* ``metric_families``: every ``sglang:`` metric family the source declares: name, type,
  help, labels, buckets, and the methods that write it (tools/sim_metric_families.py);
* ``model_info_keys`` / ``get_load_keys``: the keys those handlers return;
  ``server_info_extra_keys``: what /server_info adds to the server args;
* ``server_args_fields`` / ``cli_dest_renames``: the ServerArgs fields /server_info
  lists, and the argparse dests renamed into them;
* ``log.decode`` / ``log.prefill``: the labelled fields of the scheduler's
  batch lines, in order, each marked optional when it sits under an ``if``;
* ``startup``: the message templates of the startup milestones, placeholders
  named after their label (``avail mem=`` -> ``{avail_mem:.2f}``);
* ``runtime_modes``: ``rust_server`` (the environment variable that moves HTTP, tokenizer and
  detokenizer into the scheduler, when srt/environ.py declares it) and ``weight_cache_daemon``
  (the module of the standalone weight-cache daemon, when the release has it);
* ``server_args_checks``: what ServerArgs refuses and names the remedy of (0.5.10-0.5.13:
  speculative decoding with radix cache on a hybrid-mamba model needs
  ``--mamba-scheduler-strategy extra_buffer``), tools/server_args_checks.py.

Stdlib only; the output is deterministic for a given source tree.
"""

from __future__ import annotations

import argparse
import ast
import hashlib
import json
import re
import sys
from pathlib import Path

from server_args_checks import server_args_checks  # noqa: E402 - tools/ is sys.path[0]
from sim_metric_families import metric_families  # noqa: E402 - tools/ is sys.path[0]

GENERATED_BY = "tools/gen_sim_version_table.py"
SCHEMA_VERSION = 1
DEVICE = "cuda"  # the device whose wording the tables keep (graph_backend["cuda"])

# Startup milestones: key -> (files searched in order, pattern the rendered template must match).
MILESTONES = {
    # "Init torch distributed begin." until 0.5.20 (model_runner.py, then distributed/bootstrap.py
    # from 0.5.16), "Init parallel begin." from 0.5.21
    "dist_init_begin": (
        ["srt/distributed/bootstrap.py", "srt/model_executor/model_runner.py"],
        r"^Init (torch distributed|parallel) begin\.",
    ),
    "dist_init_end": (
        ["srt/distributed/bootstrap.py", "srt/model_executor/model_runner.py"],
        r"^Init (torch distributed|parallel) ends\. elapsed=",
    ),
    "load_weight_begin": (["srt/model_executor/model_runner.py"], r"^Load weight begin\."),
    "load_weight_end": (["srt/model_executor/model_runner.py"], r"^Load weight end\. elapsed="),
    "kv_cache_allocated": (
        ["srt/mem_cache/memory_pool.py"],
        # 0.5.17: "{cache_name} is allocated. dtype: ..., #tokens: ..." (cache_name "KV Cache")
        r"^(KV Cache|\{cache_name\}) is allocated\. (dtype: \{dtype\}, )?#tokens: .*K size",
    ),
    "memory_pool_end": (
        [
            "srt/model_executor/model_runner_kv_cache_mixin.py",
            "srt/mem_cache/kv_cache_configurator.py",
            "srt/model_executor/model_runner.py",
        ],
        r"^Memory pool end\.",
    ),
    "cuda_graph_begin": (
        [
            "srt/model_executor/model_runner.py",
            "srt/model_executor/model_runner_components/cuda_graph_setup.py",
        ],
        r"^Capture (\{capture_name\} )?cuda graph begin|^Capture \{capture_name\} CUDA graph begin",
    ),
    "cuda_graph_end": (
        [
            "srt/model_executor/model_runner.py",
            "srt/model_executor/model_runner_components/cuda_graph_setup.py",
        ],
        r"^Capture (\{capture_name\} )?cuda graph end|^Capture \{capture_name\} CUDA graph end",
    ),
    # 0.5.17+: the target prefill graph ("num_tokens=[...]") and the decode/verify graph
    # ("num_tokens_per_req=N, bs=[...]") have templates of their own
    "prefill_graph_begin": (
        ["srt/model_executor/model_runner_components/cuda_graph_setup.py"],
        r"^Capture \{capture_name\} CUDA graph begin\. backend=\{backend\}, num_tokens=",
    ),
    "decode_graph_begin": (
        ["srt/model_executor/model_runner_components/cuda_graph_setup.py"],
        r"^Capture \{capture_name\} CUDA graph begin\. .*num_tokens_per_req=",
    ),
    "piecewise_graph_begin": (
        ["srt/model_executor/model_runner.py"],
        r"^Capture piecewise CUDA graph begin",
    ),
    "piecewise_graph_end": (
        ["srt/model_executor/model_runner.py"],
        r"^Capture piecewise CUDA graph end",
    ),
    "max_total_num_tokens": (
        ["srt/managers/scheduler.py"],
        r"^max_total_num_tokens=\{max_total_num_tokens\}, ",
    ),
    "tree_cache_initialized": (["srt/mem_cache/registry.py"], r"^Tree cache initialized: "),
    "engine_startup_timings": (["srt/entrypoints/engine.py"], r"^Engine startup timings "),
    "ready": (["srt/entrypoints/http_server.py"], r"^The server is fired up and ready to roll!$"),
}
BATCH_LINES = {"decode": "Decode batch", "prefill": "Prefill batch"}
BATCH_FILES = [
    "srt/managers/scheduler_components/metrics_reporter.py",
    "srt/observability/scheduler_metrics_mixin.py",
    "srt/managers/scheduler_metrics_mixin.py",
]


def package_root(src: Path) -> Path:
    for candidate in (src / "python" / "sglang", src / "sglang", src):
        if (candidate / "srt" / "entrypoints" / "http_server.py").is_file():
            return candidate
    raise SystemExit(f"{src}: no sglang/srt/entrypoints/http_server.py under it")


def parse(path: Path) -> ast.Module:
    return ast.parse(path.read_text(encoding="utf-8"), filename=str(path))


# ----------------------------------------------------------------- templates


def _label_name(before: str) -> str | None:
    """`..., avail mem=` -> `avail_mem`; None when the text does not end in a label."""
    match = re.search(
        r"([#A-Za-z][\w #()/.-]*?)\s*[:=]\s*$", before.split(", ")[-1].split(". ")[-1]
    )
    if not match:
        return None
    name = re.sub(r"[^0-9a-zA-Z]+", "_", match.group(1).lstrip("#")).strip("_").lower()
    return name or None


def _expr_name(node: ast.expr) -> str:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return node.attr.lstrip("_")
    return re.sub(r"[^0-9a-zA-Z]+", "_", ast.unparse(node)).strip("_").lower()


def _dict_value(node: ast.expr, key: str) -> str | None:
    """The string `key` maps to in a dict literal or `defaultdict(lambda: DEFAULT, {...})`."""
    default = None
    if isinstance(node, ast.Call) and getattr(node.func, "id", "") == "defaultdict" and node.args:
        first = node.args[0]
        if isinstance(first, ast.Lambda) and isinstance(first.body, ast.Constant):
            default = first.body.value
        node = node.args[1] if len(node.args) > 1 else ast.Dict(keys=[], values=[])
    if isinstance(node, ast.Dict):
        for k, v in zip(node.keys, node.values, strict=True):
            if isinstance(k, ast.Constant) and k.value == key and isinstance(v, ast.Constant):
                return v.value
    return default


def _resolve_lookup(node: ast.expr, module: ast.Module) -> str | None:
    """`graph_backend[self.device]` -> "cuda graph" when graph_backend is a literal mapping."""
    if not (isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name)):
        return None
    for assign in ast.walk(module):
        if isinstance(assign, ast.Assign) and any(
            getattr(t, "id", None) == node.value.id for t in assign.targets
        ):
            value = _dict_value(assign.value, DEVICE)
            if value is not None:
                return value
    return None


def _device_choice(node: ast.expr) -> str | None:
    """`'a' if self.device == 'cpu' else 'b'` -> the branch taken on DEVICE."""
    if not (
        isinstance(node, ast.IfExp)
        and isinstance(node.body, ast.Constant)
        and isinstance(node.orelse, ast.Constant)
        and isinstance(node.test, ast.Compare)
    ):
        return None
    test = node.test
    other = test.comparators[0] if len(test.comparators) == 1 else None
    if not (isinstance(other, ast.Constant) and isinstance(test.ops[0], (ast.Eq, ast.NotEq))):
        return None
    if "device" not in ast.unparse(test.left):
        return None
    taken = (other.value == DEVICE) == isinstance(test.ops[0], ast.Eq)
    return str(node.body.value if taken else node.orelse.value)


def _pieces(node: ast.expr) -> list[ast.expr] | None:
    """The parts of a message: f-strings, constants and their `+` / implicit concatenations."""
    if isinstance(node, ast.JoinedStr):
        return list(node.values)
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return [node]
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        left, right = _pieces(node.left), _pieces(node.right)
        return None if left is None or right is None else left + right
    return None


def render(node: ast.expr, module: ast.Module) -> str | None:
    """A message as a str.format template with label-named placeholders."""
    pieces = _pieces(node)
    if pieces is None:
        return None
    out = ""
    for piece in pieces:
        if isinstance(piece, ast.Constant):
            out += str(piece.value).replace("{", "{{").replace("}", "}}")
            continue
        value = piece.value
        if (
            isinstance(value, ast.IfExp)
            and isinstance(value.orelse, ast.Constant)
            and value.orelse.value == ""
        ):
            continue  # an optional part (e.g. the quantization note): left out
        if (
            isinstance(value, ast.IfExp)
            and isinstance(value.body, ast.Constant)
            and isinstance(value.orelse, ast.Constant)
            and isinstance(value.orelse.value, str)
        ):
            # a wording chosen by a flag (0.5.23: "KV Cache {'VA upper bound' if
            # post_capture_active else 'is allocated'}"): the usual start-up's, the else branch
            out += value.orelse.value.replace("{", "{{").replace("}", "}}")
            continue
        resolved = _resolve_lookup(value, module) or _device_choice(value)
        if resolved is not None:
            out += resolved
            continue
        name = _label_name(out) or _expr_name(value)
        spec = ast.unparse(piece.format_spec)[2:-1] if piece.format_spec else ""
        out += "{" + name + (":" + spec if spec else "") + "}"
    return out


def _percent_template(text: str, values: list[ast.expr]) -> str:
    """`logger.info("a=%s b=%.2f", x, y)` -> `a={a} b={b:.2f}` (placeholders named after labels)."""
    out = ""
    rest = text
    for value in values:
        match = re.search(r"%(\.\d+)?([sdf])", rest)
        if not match:
            break
        out += rest[: match.start()]
        name = _label_name(out) or _expr_name(value)
        spec = f"{match.group(1)}f" if match.group(1) else ""
        out += "{" + name + (":" + spec if spec else "") + "}"
        rest = rest[match.end() :]
    return out + rest


def _messages(module: ast.Module):
    """(template, call) of every logger.* / log_info_on_rank0(...) message in a module."""
    for node in ast.walk(module):
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
        if name not in ("info", "warning", "debug", "log_info_on_rank0"):
            continue
        args = node.args[1:] if name == "log_info_on_rank0" else node.args
        if args:
            text = render(args[0], module)
            if text is not None and len(args) > 1 and "%" in text:
                text = _percent_template(text, args[1:])
            if text is not None:
                yield text, node


def startup(pkg: Path) -> dict:
    found = {}
    for key, (files, pattern) in MILESTONES.items():
        found[key] = None
        for rel in files:
            path = pkg / rel
            if not path.is_file():
                continue
            hits = [text for text, _ in _messages(parse(path)) if re.search(pattern, text)]
            if hits:
                found[key] = hits[0]
                break
    return found


# ------------------------------------------------------------- batch lines


def _strings_in_order(func: ast.FunctionDef, module: ast.Module) -> list[tuple[str, tuple | None]]:
    """Every f-string in a function, in source order, with the innermost `if` branch it sits in
    ((id of the if, "body"/"orelse"), or None at the top level)."""
    found: list[tuple[int, int, str, tuple | None]] = []

    def visit(node: ast.AST, branch: tuple | None) -> None:
        if isinstance(node, ast.JoinedStr):
            text = render(node, module)
            if text is not None:
                found.append((node.lineno, node.col_offset, text, branch))
            return
        if isinstance(node, (ast.If, ast.IfExp)):
            visit(node.test, branch)
            for part in ("body", "orelse"):
                children = getattr(node, part)
                for child in children if isinstance(children, list) else [children]:
                    visit(child, (id(node), part))
            return
        for child in ast.iter_child_nodes(node):
            visit(child, branch)

    visit(func, None)
    return [(text, branch) for _, _, text, branch in sorted(found, key=lambda f: f[:2])]


def batch_fields(pkg: Path, kind: str) -> list[dict] | None:
    marker = BATCH_LINES[kind]
    for rel in BATCH_FILES:
        path = pkg / rel
        if not path.is_file():
            continue
        module = parse(path)
        for func in ast.walk(module):
            if not isinstance(func, (ast.FunctionDef, ast.AsyncFunctionDef)):
                continue
            strings = _strings_in_order(func, module)
            start = next((i for i, (t, _) in enumerate(strings) if t.startswith(marker)), None)
            if start is None:
                continue
            fields: list[tuple[dict, tuple | None]] = []
            for text, branch in strings[start:]:
                text = text.removeprefix(marker).replace("{iter_msg}", "")
                # a slot such as {token_usage_msg} brings its own ", ": split it off what follows
                for part in re.split(r", |(?<=\})(?=[#\w])", text):
                    part = part.strip(", ")
                    if re.fullmatch(r"\{\w+\}", part):
                        fields.append(({"slot": part.strip("{}")}, branch))
                    elif ": " in part:
                        fields.append(({"label": _graph_label(part.split(": ", 1)[0])}, branch))
            return _merge(fields)
    return None


def _graph_label(label: str) -> str:
    """`{graph_backend_label}` is "cuda graph" on CUDA (the label names the device's graph kind)."""
    return "cuda graph" if label.startswith("{") and "graph" in label else label


def _merge(fields: list[tuple[dict, tuple | None]]) -> list[dict]:
    """First position of each field; optional unless written unconditionally or in both branches
    of an if."""
    branches: dict[str, set] = {}
    order: list[dict] = []
    for field, branch in fields:
        key = field.get("label") or field.get("slot")
        if key not in branches:
            branches[key] = set()
            order.append(field)
        branches[key].add(branch)
    out = []
    for field in order:
        seen = branches[field.get("label") or field.get("slot")]
        both = any(
            (node, "body") in seen and (node, "orelse") in seen for node, _ in filter(None, seen)
        )
        out.append({**field, "optional": None not in seen and not both})
    return out


# ------------------------------------------------------------------ routes


def _route(decorator: ast.expr, owner: str) -> tuple[str, list[str]] | None:
    if not (isinstance(decorator, ast.Call) and isinstance(decorator.func, ast.Attribute)):
        return None
    if getattr(decorator.func.value, "id", None) != owner or not decorator.args:
        return None
    verb = decorator.func.attr
    path = decorator.args[0]
    if isinstance(path, ast.Call) and len(path.args) == 2:  # os.environ.get("X", "/default")
        path = path.args[1]
    if not (isinstance(path, ast.Constant) and isinstance(path.value, str)):
        return None
    if verb == "api_route":
        methods = next((kw.value for kw in decorator.keywords if kw.arg == "methods"), None)
        names = [e.value for e in methods.elts] if isinstance(methods, ast.List) else ["GET"]
        return path.value, names
    if verb in ("get", "post", "put", "delete", "patch"):
        return path.value, [verb.upper()]
    return None


def _deprecation(func: ast.AST, module: ast.Module) -> dict | None:
    for text, call in _messages(module):
        if call in set(ast.walk(func)) and "deprecated" in text and call.func.attr == "warning":
            return {"warning": text}
    for node in ast.walk(func):
        if isinstance(node, ast.Call) and getattr(node.func, "id", "") == "HTTPException":
            kw = {k.arg: k.value for k in node.keywords}
            detail = render(kw["detail"], module) if "detail" in kw else None
            if detail and "deprecated" in detail:
                return {"status": getattr(kw.get("status_code"), "value", None), "detail": detail}
    return None


def _routes_of(path: Path, owner: str) -> list[dict]:
    module = parse(path)
    rows = []
    for func in ast.walk(module):
        if not isinstance(func, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        for decorator in func.decorator_list:
            route = _route(decorator, owner)
            if route:
                rows.append(
                    {
                        "path": route[0],
                        "methods": route[1],
                        "handler": func.name,
                        "deprecated": _deprecation(func, module),
                    }
                )
    return rows


def routes(pkg: Path) -> list[dict]:
    server = pkg / "srt" / "entrypoints" / "http_server.py"
    module = parse(server)
    rows = _routes_of(server, "app")
    included = {
        getattr(n.args[0], "id", None)
        for n in ast.walk(module)
        if isinstance(n, ast.Call) and getattr(n.func, "attr", "") == "include_router" and n.args
    }
    for node in ast.walk(module):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("sglang."):
            for alias in node.names:
                if alias.name == "router" and (alias.asname or alias.name) in included:
                    rel = Path(*node.module.split(".")[1:]).with_suffix(".py")
                    if (pkg / rel).is_file():
                        rows += _routes_of(pkg / rel, "router")
    return sorted(rows, key=lambda r: (r["path"], r["methods"]))


def returned_keys(pkg: Path, handler: str) -> list[str] | None:
    """The keys of the dict literal(s) a route handler builds (dict / list of dicts)."""
    module = parse(pkg / "srt" / "entrypoints" / "http_server.py")
    for func in ast.walk(module):
        if isinstance(func, (ast.FunctionDef, ast.AsyncFunctionDef)) and func.name == handler:
            keys: list[str] = []
            for node in ast.walk(func):
                if isinstance(node, ast.Dict):
                    for k in node.keys:
                        if isinstance(k, ast.Constant) and k.value not in keys:
                            keys.append(k.value)
            # keys added after the literal (`result["embedding"] = ...`, 0.5.17), in source order
            for node in sorted(
                (n for n in ast.walk(func) if isinstance(n, ast.Assign)), key=lambda n: n.lineno
            ):
                target = node.targets[0]
                if (
                    keys
                    and isinstance(target, ast.Subscript)
                    and isinstance(target.slice, ast.Constant)
                    and isinstance(target.slice.value, str)
                    and target.slice.value not in keys
                ):
                    keys.append(target.slice.value)
            return keys or None
    return None


def server_info_keys(pkg: Path, handler: str) -> list[str] | None:
    """/server_info: beside the server args and scheduler info, the keys its handler adds, and those
    set as `result["key"] = ...` by helpers it calls (build_server_info in utils/common.py)."""
    keys = returned_keys(pkg, handler) or []
    server = parse(pkg / "srt" / "entrypoints" / "http_server.py")
    handler_node = next(
        f
        for f in ast.walk(server)
        if isinstance(f, ast.AsyncFunctionDef | ast.FunctionDef) and f.name == handler
    )
    called = {
        getattr(c.func, "id", None) for c in ast.walk(handler_node) if isinstance(c, ast.Call)
    }
    common = pkg / "srt" / "utils" / "common.py"
    for func in ast.walk(parse(common)) if common.is_file() else []:
        if isinstance(func, ast.FunctionDef) and func.name in called:
            for node in ast.walk(func):
                if isinstance(node, ast.Assign) and isinstance(node.targets[0], ast.Subscript):
                    key = node.targets[0].slice
                    if (
                        isinstance(key, ast.Constant)
                        and isinstance(key.value, str)
                        and key.value not in keys
                    ):
                        keys.append(key.value)
    return keys or None


def server_args(pkg: Path) -> tuple[list[str], dict[str, str]]:
    """ServerArgs' fields (what /server_info lists) and the argparse dests from_cli_args renames
    into them (`args.tp_size = args.tensor_parallel_size`)."""
    module = parse(pkg / "srt" / "server_args.py")
    cls = next(n for n in module.body if isinstance(n, ast.ClassDef) and n.name == "ServerArgs")
    names = [
        s.target.id
        for s in cls.body
        if isinstance(s, ast.AnnAssign) and isinstance(s.target, ast.Name)
    ]
    renames = {}
    for func in cls.body:
        if isinstance(func, ast.FunctionDef) and func.name == "from_cli_args":
            for node in ast.walk(func):
                if (
                    isinstance(node, ast.Assign)
                    and isinstance(node.targets[0], ast.Attribute)
                    and isinstance(node.value, ast.Attribute)
                ):
                    renames[node.value.attr] = node.targets[0].attr
    return [n for n in names if not n.startswith("_")], renames


def record_fields(pkg: Path, name: str) -> list[str] | None:
    """The annotated fields of a class in managers/io_struct.py (what a handler returns as is)."""
    path = pkg / "srt" / "managers" / "io_struct.py"
    if not path.is_file():
        return None
    for node in ast.walk(parse(path)):
        if isinstance(node, ast.ClassDef) and node.name == name:
            return [
                s.target.id
                for s in node.body
                if isinstance(s, ast.AnnAssign) and isinstance(s.target, ast.Name)
            ] or None
    return None


def v1_loads(pkg: Path) -> dict | None:
    """/v1/loads (entrypoints/v1_loads.py): the keys of its answer, and of each `loads` item
    (LoadSnapshot's scalar fields, then its optional sections with their fields; before
    load_snapshot.py, 0.5.9-0.5.1x, the same from io_struct.py's GetLoadsReqOutput)."""
    endpoint = pkg / "srt" / "entrypoints" / "v1_loads.py"
    snapshot, record = pkg / "srt" / "managers" / "load_snapshot.py", "LoadSnapshot"
    if not snapshot.is_file():
        snapshot, record = pkg / "srt" / "managers" / "io_struct.py", "GetLoadsReqOutput"
    if not (endpoint.is_file() and snapshot.is_file()):
        return None
    top: list[str] = []
    for func in ast.walk(parse(endpoint)):
        if isinstance(func, ast.AsyncFunctionDef) and func.name == "get_loads":
            for node in ast.walk(func):
                if isinstance(node, ast.Return) and isinstance(node.value, ast.Dict):
                    top = [k.value for k in node.value.keys if isinstance(k, ast.Constant)]
    classes = {
        node.name: [
            s.target.id
            for s in node.body
            if isinstance(s, ast.AnnAssign) and isinstance(s.target, ast.Name)
        ]
        for node in ast.walk(parse(snapshot))
        if isinstance(node, ast.ClassDef)
    }
    sections = {}
    core = []
    cls = next((n for n in ast.walk(parse(snapshot)) if getattr(n, "name", "") == record), None)
    if cls is None:
        return None
    for field in cls.body:
        if not (isinstance(field, ast.AnnAssign) and isinstance(field.target, ast.Name)):
            continue
        inner = [
            n.id for n in ast.walk(field.annotation) if isinstance(n, ast.Name) and n.id in classes
        ]
        if inner:
            sections[field.target.id] = classes[inner[0]]
        else:
            core.append(field.target.id)
    return {"keys": top, "core_keys": core, "sections": sections} if top else None


METRICS_FILES = [
    "srt/observability/metrics_collector.py",
    "srt/metrics/collector.py",
]


def metric_extra_labels(pkg: Path) -> dict[str, list[str]] | None:
    """Metrics declared with labels beyond the collector's common ones (`labelnames=list(labels
    .keys()) + ["is_streaming"]`, 0.5.17): metric name (as declared) -> those extra labels."""
    for rel in METRICS_FILES:
        path = pkg / rel
        if not path.is_file():
            continue
        out: dict[str, list[str]] = {}
        for node in ast.walk(parse(path)):
            if not isinstance(node, ast.Call):
                continue
            kw = {k.arg: k.value for k in node.keywords}
            name = kw.get("name")
            if not (isinstance(name, ast.Constant) and str(name.value).startswith("sglang:")):
                continue
            labels = kw.get("labelnames")
            extra = (
                [
                    n.value
                    for n in ast.walk(labels)
                    if labels is not None
                    if isinstance(n, ast.Constant) and isinstance(n.value, str)
                ]
                if labels is not None
                else []
            )
            if extra:
                out[name.value] = extra
        return out
    return None


def metrics_mount(pkg: Path) -> str | None:
    for path in sorted((pkg / "srt" / "utils").glob("*.py")):
        for node in ast.walk(parse(path)):
            mount = (
                isinstance(node, ast.Call) and getattr(node.func, "id", "") == "Mount" and node.args
            )
            if (
                mount
                and isinstance(node.args[0], ast.Constant)
                and "metrics" in str(node.args[0].value)
            ):
                return node.args[0].value
    return None


def version_of(pkg: Path) -> str:
    for name in ("_version.py", "version.py"):
        path = pkg / name
        text = path.read_text(encoding="utf-8") if path.is_file() else ""
        match = re.search(r"^__version__\s*=\s*(?:version\s*=\s*)?['\"]([^'\"]+)['\"]", text, re.M)
        if match and match.group(1) != "0.0.0.dev0":
            return match.group(1)
    raise SystemExit(f"{pkg}: cannot tell the SGLang version")


def launch_server_warning(pkg: Path) -> dict | None:
    """The warning `python -m sglang.launch_server` prints on import (if `sglang serve` exists)."""
    path = pkg / "launch_server.py"
    if not path.is_file():
        return None
    module = parse(path)
    for node in ast.walk(module):
        if isinstance(node, ast.Call) and ast.unparse(node.func) == "warnings.warn" and node.args:
            text = render(node.args[0], module)
            if text and "launch_server" in text:
                return {"line": node.lineno, "text": text}
    return None


def fingerprint(pkg: Path, rels: list[str]) -> dict:
    """sha256 of each file read, so a regenerated table can be checked against its source."""
    out = {}
    for rel in rels:
        path = pkg / rel
        if path.is_file():
            out[rel] = hashlib.sha256(path.read_bytes()).hexdigest()
    return out


def serve_positional_model(pkg: Path) -> bool:
    """Whether `sglang serve MODEL` takes the model path as its first positional argument
    (sglang/cli/serve.py's `_normalize_positional_model_path`, from 0.5.16)."""
    serve = pkg / "cli" / "serve.py"
    return serve.is_file() and "def _normalize_positional_model_path" in serve.read_text()


def runtime_modes(pkg: Path) -> dict:
    """The process-model switches of a release (see the module docstring)."""
    environ = pkg / "srt" / "environ.py"
    declared = environ.is_file() and re.search(
        r"^\s+SGLANG_RUST_SERVER\s*=", environ.read_text(encoding="utf-8"), re.M
    )
    daemon = pkg / "srt" / "weight_cache" / "daemon.py"
    return {
        "rust_server": "SGLANG_RUST_SERVER" if declared else None,
        "weight_cache_daemon": "sglang.srt.weight_cache.daemon" if daemon.is_file() else None,
    }


def table(pkg: Path, origin: str | None, commit: str | None) -> dict:
    version = version_of(pkg)
    rows = routes(pkg)
    handler = {r["path"]: r["handler"] for r in rows}
    fields, renames = server_args(pkg)
    families = metric_families(pkg)
    read = sorted(
        {
            "srt/entrypoints/http_server.py",
            "launch_server.py",
            "srt/entrypoints/v1_loads.py",
            "srt/managers/load_snapshot.py",
            "srt/environ.py",
            "srt/server_args.py",
            "srt/configs/linear_attn_model_registry.py",
            *METRICS_FILES,
            *BATCH_FILES,
            *(rel for files, _ in MILESTONES.values() for rel in files),
            *(family["file"] for family in families),
        }
    )
    return {
        "generated_by": GENERATED_BY,
        "schema_version": SCHEMA_VERSION,
        "sglang_version": version,
        "source": {
            "tag": f"v{version}",
            "commit": commit,
            "origin": origin,
            "sha256": fingerprint(pkg, read),
        },
        "serve_cli": (pkg / "cli" / "serve.py").is_file(),
        "serve_positional_model": serve_positional_model(pkg),
        "launch_server_warning": launch_server_warning(pkg),
        "routes": rows,
        "metrics_mount": metrics_mount(pkg),
        "server_args_fields": fields,
        "cli_dest_renames": renames,
        "server_info_extra_keys": server_info_keys(pkg, handler["/server_info"]),
        "model_info_keys": returned_keys(
            pkg, handler.get("/model_info") or handler.get("/get_model_info", "")
        ),
        "get_load_keys": (
            returned_keys(pkg, handler["/get_load"]) or record_fields(pkg, "GetLoadReqOutput")
        )
        if "/get_load" in handler
        else None,
        "v1_loads": v1_loads(pkg),
        "metric_extra_labels": metric_extra_labels(pkg),
        "metric_families": families,
        "log": {kind: batch_fields(pkg, kind) for kind in BATCH_LINES},
        "startup": startup(pkg),
        "runtime_modes": runtime_modes(pkg),
        "server_args_checks": server_args_checks(pkg),
    }


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument(
        "source", type=Path, help="SGLang checkout, or a folder holding the sglang package"
    )
    p.add_argument("output", type=Path, help="the JSON table to write")
    p.add_argument("--origin", help="where the source came from (e.g. the wheel's file name)")
    p.add_argument("--commit", help="the git commit the source is at, when known")
    args = p.parse_args(argv)
    data = table(package_root(args.source), args.origin, args.commit)
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text(json.dumps(data, indent=1) + "\n", encoding="utf-8")
    print(
        f"{args.output}: SGLang {data['sglang_version']}, {len(data['routes'])} routes",
        file=sys.stderr,
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
