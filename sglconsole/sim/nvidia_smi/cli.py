"""A replay of the real ``nvidia-smi`` CLI for a simulated GPU host.

Used as the simulated host's ``bin/nvidia-smi`` (``raise SystemExit(program(root=...))``).
The host ROOT comes from ``main(root=...)``, else env ``SGLSIM_ROOT``, else the
launcher's location (``ROOT/bin/nvidia-smi``). Host settings and registered
GPU uses are described in :mod:`sglconsole.sim.gpustate`.

Output formats are modelled byte-for-byte on real captures of driver 580.159.04
(tests/fixtures/nvidia-smi/h200/): ``--query-gpu`` / ``--query-compute-apps`` CSV (header
names, units, ``[N/A]``), the default table, ``-q`` text, ``-q -x`` XML, ``-L``; errors print
nvidia-smi's own text on stdout with its exit codes (invalid field 2, no such device 6, no
driver 9).

Startup cost matters (it runs every few seconds per host): imports are stdlib-only, minimal.
"""

from __future__ import annotations

import os
import sys
import time

from sglconsole.sim import gpustate
from sglconsole.sim.gpu_models import get_model, gpu_bus_id, noise
from sglconsole.sim.nvidia_smi.query import (
    APP_ALIASES,
    APP_FIELDS,
    GPU_ALIASES,
    GPU_FIELDS,
    UnknownField,
    apps_query_header,
    gpu_query_header,
    render_compute_apps,
    render_query_gpu,
    resolve_fields,
)
from sglconsole.sim.nvidia_smi.report import DISPLAY_SECTIONS, render_text_query, render_xml
from sglconsole.sim.nvidia_smi.state import gpu_states
from sglconsole.sim.nvidia_smi.table import render_list, render_table

__all__ = ["find_root", "main"]

NO_DRIVER_TEXT = (
    "NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver. "
    "Make sure that the latest NVIDIA driver is installed and running.\n\n"
)
NO_DEVICES_TEXT = "No devices were found\n"
INVALID_COMBINATION_TEXT = (
    "Invalid combination of input arguments. Please run 'nvidia-smi -h' for help.\n"
)

EXIT_INVALID_ARG = 2
EXIT_NOT_FOUND = 6
EXIT_NO_DRIVER = 9
EXIT_GPU_LOST = 15


class _CliError(Exception):
    def __init__(self, text: str, code: int) -> None:
        super().__init__(text)
        self.text = text
        self.code = code


# =========================================================================== CLI


def _help_text() -> str:
    """``nvidia-smi -h`` ({driver} to fill in), kept as data."""
    from importlib import resources  # here: only -h pays for it

    return (
        resources.files("sglconsole.sim.nvidia_smi")
        .joinpath("data/nvidia_smi_help.txt")
        .read_text()
    )


def _unrecognized(opt: str) -> _CliError:
    return _CliError(
        f"ERROR: Option {opt} is not recognized. Please run 'nvidia-smi -h'.\n", EXIT_INVALID_ARG
    )


def _invalid() -> _CliError:
    return _CliError(INVALID_COMBINATION_TEXT, EXIT_INVALID_ARG)


_LONG_WITH_VALUE = {
    "--query-gpu": "query_gpu",
    "--query-compute-apps": "query_apps",
    "--format": "format",
    "--id": "id",
    "--loop": "loop",
    "--loop-ms": "loop_ms",
    "--display": "display",
}
_LONG_FLAGS = {
    "--query": "q",
    "--xml-format": "x",
    "--list-gpus": "L",
    "--help": "h",
    "--version": "version",
}
_SHORT_FLAGS = {"-q": "q", "-x": "x", "-L": "L", "-h": "h"}
_SHORT_WITH_VALUE = {"-i": "id", "-d": "display", "-lms": "loop_ms"}


def parse_args(argv: list[str]) -> dict:
    """Parse like nvidia-smi does (the subset the simulation supports); raises _CliError."""
    opts: dict = {}
    position = 0
    while position < len(argv):
        arg = argv[position]
        position += 1
        if arg.startswith("--"):
            key, separator, val = arg.partition("=")
            if key in _LONG_FLAGS and not separator:
                opts[_LONG_FLAGS[key]] = True
                continue
            if key in _LONG_WITH_VALUE:
                name = _LONG_WITH_VALUE[key]
                if not separator:
                    if key == "--loop" and (position >= len(argv) or not argv[position].isdigit()):
                        opts[name] = "5"
                        continue
                    if position >= len(argv):
                        raise _invalid()
                    val = argv[position]
                    position += 1
                opts[name] = val
                continue
            raise _unrecognized(arg)
        if arg in _SHORT_FLAGS:
            opts[_SHORT_FLAGS[arg]] = True
            continue
        if arg == "-l":
            if position < len(argv) and argv[position].isdigit():
                opts["loop"] = argv[position]
                position += 1
            else:
                opts["loop"] = "5"
            continue
        if arg in _SHORT_WITH_VALUE:
            if position >= len(argv):
                raise _invalid()
            opts[_SHORT_WITH_VALUE[arg]] = argv[position]
            position += 1
            continue
        if arg.startswith("-i") and len(arg) > 2:  # -i0
            opts["id"] = arg[2:].lstrip("=")
            continue
        if arg in ("-qx", "-xq"):
            opts["q"] = opts["x"] = True
            continue
        raise _unrecognized(arg)

    query = "query_gpu" in opts or "query_apps" in opts
    if "query_gpu" in opts and "query_apps" in opts:
        raise _invalid()
    if opts.get("L") and (query or opts.get("q")):
        raise _invalid()
    if query and opts.get("q"):
        raise _invalid()
    if "format" in opts and not query:
        raise _invalid()
    if query:
        parts = [part.strip() for part in opts.get("format", "").split(",") if part.strip()]
        if "csv" not in parts or any(part not in ("csv", "noheader", "nounits") for part in parts):
            raise _invalid()
        opts["header"] = "noheader" not in parts
        opts["units"] = "nounits" not in parts
    if opts.get("x") and not opts.get("q"):
        raise _invalid()
    if "display" in opts:
        if not opts.get("q"):
            raise _invalid()
        types = tuple(part.strip().upper() for part in opts["display"].split(",") if part.strip())
        if not types or any(part not in DISPLAY_SECTIONS for part in types):
            raise _invalid()
        opts["display"] = types
    period = None
    if "loop_ms" in opts:
        if not str(opts["loop_ms"]).isdigit():
            raise _invalid()
        period = max(1, int(opts["loop_ms"])) / 1000.0
    elif "loop" in opts:
        if not str(opts["loop"]).isdigit():
            raise _invalid()
        period = max(1, int(opts["loop"]))
    opts["period"] = period
    return opts


def _select_gpus(states: list[dict], spec: str | None) -> list[dict]:
    if spec is None:
        return states
    chosen = []
    for tok in spec.split(","):
        tok = tok.strip()
        match = None
        for state in states:
            if (
                tok == str(state["index"])
                or tok == state["uuid"]
                or tok.upper() in (state["bus_id"], state["bus_id"][4:])
            ):
                match = state
                break
        if match is None:
            raise _CliError(NO_DEVICES_TEXT, EXIT_NOT_FOUND)
        if match not in chosen:
            chosen.append(match)
    return chosen


def find_root(root: str | None = None) -> str | None:
    if root:
        return os.fspath(root)
    env = os.environ.get("SGLSIM_ROOT")
    if env:
        return env
    prog = os.path.abspath(sys.argv[0]) if sys.argv and sys.argv[0] else ""
    bindir = os.path.dirname(prog)
    if os.path.basename(bindir) == "bin":
        candidate = os.path.dirname(bindir)
        if os.path.isfile(gpustate.host_path(candidate)):
            return candidate
    return None


def _garbage(now: float) -> str:
    junk = [
        f"\x1b[31m?? NVML: unexpected response 0x{int((noise(now, 1) + 1) * 2**31):08x}\x1b[0m",
        "0, GPU-",
        "GPU 0: <<<<<<<<< ???",
        f"ÿþ\x07 nvidia nvidia nvidia ;;;; {int(now)}",
        "index; uuid; name",
        "-" * (int((noise(now, 2) + 1) * 30) + 1),
    ]
    return "\n".join(junk) + "\n"


class _Out:
    def __init__(self) -> None:
        self.stream = sys.stdout

    def write(self, text: str) -> None:
        self.stream.write(text)
        self.stream.flush()


def program(root: str | None = None) -> int:
    """As a program it dies quietly on a closed pipe, like C; never so in main() (in-process)."""
    import signal

    signal.signal(signal.SIGPIPE, signal.SIG_DFL)
    return main(root=root)


def main(argv: list[str] | None = None, root: str | None = None) -> int:
    """Run the simulated nvidia-smi; returns its exit code."""
    args = sys.argv[1:] if argv is None else list(argv)
    out = _Out()
    try:
        return _run(args, find_root(root), out)
    except KeyboardInterrupt:
        return 0
    except BrokenPipeError:  # pragma: no cover - SIGPIPE is SIG_DFL
        try:
            sys.stdout = None  # type: ignore[assignment]
        except Exception:  # noqa: BLE001
            pass
        return 0


def _mode_failure(host: dict, out: _Out) -> int | None:
    """Apply host.json's nvidia_smi fault mode; None means behave normally."""
    mode = host.get("nvidia_smi", "ok")
    if mode == "hang":
        while True:
            time.sleep(3600)
    if mode == "no_driver":
        out.write(NO_DRIVER_TEXT)
        return EXIT_NO_DRIVER
    if mode == "fail":
        bus_id = gpu_bus_id(get_model(host.get("gpu_model")), 0)[4:]
        out.write(f"Unable to determine the device handle for GPU{bus_id}: Unknown Error\n")
        return EXIT_GPU_LOST
    if mode == "garbage":
        out.write(_garbage(time.time()))
        return 0
    if mode == "empty":
        return 0
    return None


def _run(args: list[str], root: str | None, out: _Out) -> int:
    if root is None:
        out.write(NO_DRIVER_TEXT)
        return EXIT_NO_DRIVER
    host = gpustate.load_host(root)
    code = _mode_failure(host, out)
    if code is not None:
        return code
    try:
        opts = parse_args(args)
    except _CliError as failure:
        out.write(failure.text)
        return failure.code
    driver = str(host.get("driver_version", "580.159.04"))
    cuda = str(host.get("cuda_version", "13.0"))
    if opts.get("h"):
        out.write(_help_text().format(driver=driver))
        return 0
    if opts.get("version"):
        out.write(
            f"NVIDIA-SMI version  : {driver}\nNVML version        : {driver.rsplit('.', 1)[0]}\n"
            f"DRIVER version      : {driver}\nCUDA Version        : {cuda}\n"
        )
        return 0

    fields: list[str] = []
    try:
        if "query_gpu" in opts:
            fields = resolve_fields(opts["query_gpu"], GPU_FIELDS, GPU_ALIASES)
        elif "query_apps" in opts:
            fields = resolve_fields(opts["query_apps"], APP_FIELDS, APP_ALIASES)
    except UnknownField as error:
        out.write(str(error))
        return EXIT_INVALID_ARG

    period = opts["period"]
    first = True
    next_at = time.monotonic()
    while True:
        now = time.time()
        if not first:
            host = gpustate.load_host(root)
            code = _mode_failure(host, out)
            if code is not None:
                return code
        states = gpu_states(host, gpustate.read_gpu_uses(root), now)
        try:
            chosen = _select_gpus(states, opts.get("id"))
        except _CliError as failure:
            out.write(failure.text)
            return failure.code
        if not states:
            out.write(NO_DEVICES_TEXT)
            return EXIT_NOT_FOUND
        out.write(_render_once(opts, fields, chosen, len(states), driver, cuda, now, first))
        first = False
        if period is None:
            return 0
        next_at += period
        delay = next_at - time.monotonic()
        if delay < 0:  # fell behind (suspended?): restart the schedule
            next_at = time.monotonic()
            delay = 0
        time.sleep(delay)


def _render_once(
    opts: dict,
    fields: list[str],
    chosen: list[dict],
    attached: int,
    driver: str,
    cuda: str,
    now: float,
    first: bool,
) -> str:
    if "query_gpu" in opts:
        lines = render_query_gpu(chosen, fields, units=opts["units"])
        if opts["header"] and first:
            lines.insert(0, gpu_query_header(fields))
        return "".join(line + "\n" for line in lines)
    if "query_apps" in opts:
        lines = render_compute_apps(chosen, fields, units=opts["units"])
        if opts["header"] and first:
            lines.insert(0, apps_query_header(fields))
        return "".join(line + "\n" for line in lines)
    if opts.get("L"):
        return render_list(chosen)
    if opts.get("q"):
        render = render_xml if opts.get("x") else render_text_query
        return render(
            chosen,
            driver=driver,
            cuda=cuda,
            now=now,
            attached=attached,
            display=opts.get("display"),
        )
    return render_table(chosen, driver=driver, cuda=cuda, now=now)


if __name__ == "__main__":
    raise SystemExit(program())
