"""The simulated nvidia-smi, run as a real subprocess, against the real H200 captures."""

from __future__ import annotations

import difflib
import json
import os
import re
import signal
import subprocess
import sys
import time
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from sglconsole.core.nvidia_smi import (
    GPU_QUERY_FIELDS,
    GpuStreamAssembler,
    classify_nvidia_smi_error,
    parse_compute_apps,
    parse_gpu_csv,
)
from sglconsole.sim import gpustate
from sglconsole.sim.nvidia_smi import cli as sim
from sglconsole.sim.nvidia_smi.report import render_text_query, render_xml
from sglconsole.sim.nvidia_smi.state import gpu_states
from sglconsole.sim.nvidia_smi.table import render_table

REPO = Path(__file__).resolve().parents[2]
FIX = REPO / "tests" / "fixtures" / "nvidia-smi" / "h200"
Q = "--query-gpu=" + ",".join(GPU_QUERY_FIELDS)
APPS = "--query-compute-apps=pid,process_name,used_memory,gpu_uuid"


def fx(name: str) -> str:
    return (FIX / name).read_text()


def _env(root: Path) -> dict:
    env = dict(os.environ)
    env["SGLSIM_ROOT"] = str(root)
    env["PYTHONPATH"] = str(REPO) + os.pathsep + env.get("PYTHONPATH", "")
    return env


def smi(root: Path, *args: str, timeout: float = 10) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "sglconsole.sim.nvidia_smi.cli", *args],
        env=_env(root),
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def make_host(tmp_path: Path, **settings) -> Path:
    root = tmp_path / "gpuhost"
    gpustate.write_host(
        root, **{"gpu_model": "H200", "gpu_count": 1, "uuid_seed": "gpuhost", **settings}
    )
    return root


@pytest.fixture
def h200(tmp_path):
    return make_host(tmp_path)


@pytest.fixture
def holder():
    """Live processes standing in for GPU users (killed and reaped at the end)."""
    procs = []

    def spawn():
        p = subprocess.Popen(["sleep", "60"])
        procs.append(p)
        return p

    yield spawn
    for p in procs:
        p.kill()
        p.wait()


def _shape(cell: str) -> str:
    return re.sub(r"[0-9a-f]+", "x", cell.lower())


# ----------------------------------------------------------------------------- query-gpu


def test_query_gpu_matches_fixture_format(h200):
    r = smi(h200, Q, "--format=csv")
    assert r.returncode == 0 and r.stderr == ""
    got = r.stdout.splitlines()
    ref = fx("query-gpu-idle.csv").splitlines()
    assert got[0] == ref[0]  # header names exactly as the real tool prints them
    assert len(got) == 2
    cells, ref_cells = got[1].split(", "), ref[1].split(", ")
    assert len(cells) == len(ref_cells) == 20
    assert [_shape(c) for c in cells] == [_shape(c) for c in ref_cells]
    [s] = parse_gpu_csv(r.stdout)
    [ref_s] = parse_gpu_csv(fx("query-gpu-idle.csv"))
    for attr in (
        "name",
        "bus_id",
        "driver",
        "mem_total_mib",
        "mem_used_mib",
        "mem_free_mib",
        "util_gpu",
        "pstate",
        "fan_pct",
        "mig_mode",
        "ecc_uncorrected",
        "throttle_reasons",
        "clock_sm_mhz",
        "clock_mem_mhz",
        "power_limit_w",
    ):
        assert getattr(s, attr) == getattr(ref_s, attr), attr
    assert abs(s.power_draw_w - 123.5) < 3 and abs(s.temperature_c - 38) <= 2
    assert re.fullmatch(r"GPU-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}", s.uuid)


def test_query_gpu_noheader_nounits_shape(h200):
    r = smi(h200, Q, "--format=csv,noheader,nounits")
    ref = fx("query-gpu-idle.noheader-nounits.csv").splitlines()
    assert len(r.stdout.splitlines()) == 1
    assert [_shape(c) for c in r.stdout.strip().split(", ")] == [
        _shape(c) for c in ref[0].split(", ")
    ]
    assert len(parse_gpu_csv(r.stdout)) == 1


def test_aliases_and_subsets(h200):
    r = smi(
        h200,
        "--query-gpu=gpu_name,clocks.current.sm,clocks.gr,timestamp,count,memory.reserved",
        "--format=csv",
    )
    header, row = r.stdout.splitlines()
    assert header == (
        "name, clocks.current.sm [MHz], clocks.current.graphics [MHz], timestamp, "
        "count, memory.reserved [MiB]"
    )
    assert re.fullmatch(
        r"NVIDIA H200, \d+ MHz, \d+ MHz, \d{4}/\d\d/\d\d \d\d:\d\d:\d\d\.\d{3}, 1, 616 MiB", row
    )


def test_load_changes_memory_util_and_apps(h200, holder):
    p = holder()
    gpustate.register_gpu_use(h200, p.pid, [0], 21482, util=100, name="python3")
    [s] = parse_gpu_csv(smi(h200, Q, "--format=csv,noheader,nounits").stdout)
    assert s.mem_used_mib == 21491 and s.mem_free_mib == 121666  # as on the real H200
    assert s.util_gpu in (99, 100) and 20 <= s.util_mem <= 24
    assert 680 < s.power_draw_w <= 700 and 54 <= s.temperature_c <= 61
    assert s.throttle_reasons == 0x4 and 1440 <= s.clock_sm_mhz <= 1530
    r = smi(h200, APPS, "--format=csv")
    assert r.stdout.splitlines()[0] == fx("compute-apps-loaded.csv").splitlines()[0]
    assert parse_compute_apps(r.stdout)[0].pid == p.pid
    assert parse_compute_apps(r.stdout)[0].used_mib == 21482
    # update in place: half load
    gpustate.register_gpu_use(h200, p.pid, [0], 21482, util=50, name="python3")
    [s] = parse_gpu_csv(smi(h200, Q, "--format=csv,noheader,nounits").stdout)
    assert s.util_gpu == 50 and 350 < s.power_draw_w < 460 and s.throttle_reasons == 0
    gpustate.unregister_gpu_use(h200, p.pid)
    [s] = parse_gpu_csv(smi(h200, Q, "--format=csv,noheader,nounits").stdout)
    assert s.mem_used_mib == 0 and s.util_gpu == 0


def test_two_procs_like_fixture(h200, holder):
    a, b = holder(), holder()
    gpustate.register_gpu_use(h200, a.pid, [0], 10758, util=0, name="python3")
    gpustate.register_gpu_use(h200, b.pid, [0], 5638, util=0, name="python3")
    [s] = parse_gpu_csv(smi(h200, Q, "--format=csv,noheader,nounits").stdout)
    assert s.mem_used_mib == 16411  # fixture table-two-procs.txt
    r = smi(h200, APPS + ",gpu_bus_id", "--format=csv")
    assert r.stdout.splitlines()[0] == fx("compute-apps-two-procs.csv").splitlines()[0]
    apps = parse_compute_apps(r.stdout)
    assert sorted((x.pid, x.used_mib) for x in apps) == sorted([(a.pid, 10758), (b.pid, 5638)])
    bare = smi(h200, APPS, "--format=csv,noheader,nounits").stdout
    assert len(bare.splitlines()) == 2 and not bare.startswith("pid")


def test_compute_apps_header_only_when_idle(h200):
    assert smi(h200, APPS, "--format=csv").stdout == fx("compute-apps-idle.csv")
    assert smi(h200, APPS, "--format=csv,noheader").stdout == ""


def test_pid_offset_models_lxc(tmp_path, holder):
    root = make_host(tmp_path, pid_offset=1_000_000)
    p = holder()
    gpustate.register_gpu_use(root, p.pid, [0], 2048, util=10, name="sglang::scheduler")
    [app] = parse_compute_apps(smi(root, APPS, "--format=csv,noheader,nounits").stdout)
    assert app.pid == p.pid + 1_000_000 and app.process_name == "sglang::scheduler"
    assert f"{p.pid + 1_000_000}" in smi(root).stdout


def test_dead_and_zombie_pids_ignored(h200):
    dead = subprocess.Popen(["true"])
    dead.wait()
    gpustate.register_gpu_use(h200, dead.pid, [0], 1000, util=50)
    zombie = subprocess.Popen(["true"])
    deadline = time.time() + 5
    while time.time() < deadline:  # exited but not reaped: state Z
        stat = Path(f"/proc/{zombie.pid}/stat").read_text()
        if stat.rsplit(")", 1)[1].split()[0] == "Z":
            break
        time.sleep(0.01)
    try:
        assert not gpustate.pid_alive(zombie.pid)
        gpustate.register_gpu_use(h200, zombie.pid, [0], 2000, util=50)
        assert gpustate.read_gpu_uses(h200) == []
        [s] = parse_gpu_csv(smi(h200, Q, "--format=csv,noheader,nounits").stdout)
        assert s.mem_used_mib == 0 and s.util_gpu == 0
        assert not (Path(gpustate.gpu_dir(h200)) / f"{dead.pid}.json").exists()  # removed lazily
    finally:
        zombie.wait()


# ----------------------------------------------------------------------------- errors


def test_missing_gpu_index(h200):
    r = smi(h200, "-i", "7", Q, "--format=csv")
    assert r.returncode == 6 and r.stdout == "No devices were found\n"
    assert "No devices were found" in classify_nvidia_smi_error(r.stdout, r.stderr, r.returncode)


def test_bogus_field(h200):
    r = smi(h200, "--query-gpu=index,bogus.field", "--format=csv")
    assert r.returncode == 2
    assert r.stdout == 'Field "bogus.field" is not a valid field to query.\n\n'
    assert "bogus.field" in classify_nvidia_smi_error(r.stdout, r.stderr, r.returncode)
    r = smi(h200, "--query-compute-apps=pid,nope", "--format=csv")
    assert r.returncode == 2 and 'Field "nope"' in r.stdout


def test_bad_arguments(h200):
    r = smi(h200, "--bogus")
    assert r.returncode == 2 and "not recognized" in r.stdout
    for args in (["--format=csv"], [Q], [Q, "--format=json"], ["-L", Q, "--format=csv"], ["-x"]):
        r = smi(h200, *args)
        assert r.returncode == 2, args
        assert r.stdout.startswith("Invalid combination of input arguments"), args


@pytest.mark.parametrize(
    ("mode", "code", "text"),
    [
        ("no_driver", 9, "couldn't communicate with the NVIDIA driver"),
        ("fail", 15, "Unable to determine the device handle for GPU0000:00:06.0: Unknown Error"),
        ("empty", 0, ""),
    ],
)
def test_fault_modes(tmp_path, mode, code, text):
    root = make_host(tmp_path, nvidia_smi=mode)
    r = smi(root, Q, "--format=csv,noheader,nounits")
    assert r.returncode == code and text in r.stdout and r.stderr == ""
    if text == "":
        assert r.stdout == ""
    msg = classify_nvidia_smi_error(r.stdout, r.stderr, r.returncode)
    assert (msg is None) == (code == 0)


def test_garbage_mode_parses_to_nothing(tmp_path):
    root = make_host(tmp_path, nvidia_smi="garbage")
    r = smi(root, Q, "--format=csv,noheader,nounits")
    assert r.returncode == 0 and r.stdout.strip()
    assert parse_gpu_csv(r.stdout) == [] and parse_compute_apps(r.stdout) == []
    asm = GpuStreamAssembler()
    assert asm.feed_lines(r.stdout) == [] and asm.garbage >= 3


def test_hang_mode(tmp_path):
    root = make_host(tmp_path, nvidia_smi="hang")
    with pytest.raises(subprocess.TimeoutExpired):
        smi(root, "-L", timeout=0.6)


# ----------------------------------------------------------------------------- loop


def test_lms_stream_and_sigterm(h200):
    p = subprocess.Popen(
        [sys.executable, "-m", "sglconsole.sim.nvidia_smi.cli", Q, "--format=csv", "-lms", "200"],
        env=_env(h200),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    # signalled once three periods have come (a loaded machine may take seconds to start it)
    seen, watch = [], GpuStreamAssembler()
    deadline = time.monotonic() + 30
    while watch.snapshots < 3 and time.monotonic() < deadline:
        line = p.stdout.readline()
        if not line:
            break
        seen.append(line)
        watch.feed(line)
    p.send_signal(signal.SIGTERM)
    # read on from the same file (communicate() would skip what readline() has buffered)
    out, err = "".join(seen) + p.stdout.read(), p.stderr.read()
    p.wait(timeout=5)
    assert p.returncode == -signal.SIGTERM and err == ""  # no traceback
    lines = out.splitlines()
    assert lines[0].startswith("index, uuid") and sum(ln.startswith("index") for ln in lines) == 1
    asm = GpuStreamAssembler()
    snaps = asm.feed_lines(out)
    assert len(snaps) >= 3 and asm.garbage == 0 and asm.headers == 1


def test_loop_survives_closed_pipe(h200):
    p = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "sglconsole.sim.nvidia_smi.cli",
            "--query-gpu=index",
            "--format=csv,noheader",
            "-lms",
            "50",
        ],
        env=_env(h200),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert p.stdout.readline() == b"0\n"
    p.stdout.close()
    p.wait(timeout=5)
    assert p.stderr.read() == b""
    p.stderr.close()


# ----------------------------------------------------------------------------- table / -q / -L


def _fixture_state(host: dict, uses: list[dict], now: float, **values) -> list[dict]:
    states = gpu_states(host, uses, now)
    states[0].update(values)
    return states


HOST1 = {
    "gpu_model": "H200",
    "gpu_count": 1,
    "driver_version": "580.159.04",
    "cuda_version": "13.0",
    "uuid_seed": "x",
    "pid_offset": 0,
}
UUID1 = "GPU-28a2a3d1-2ecf-1974-b183-3710caffb3c8"


def _t(*ymdhms) -> float:
    return time.mktime((*ymdhms, 0, 0, -1))


@pytest.mark.parametrize(
    ("fixture", "uses", "values", "when"),
    [
        ("table-idle.txt", [], {"temp": 38, "power": 123.49}, (2026, 12, 2, 12, 18, 32)),
        (
            "table-loaded.txt",
            [{"pid": 432, "gpus": [0], "mem_mib": 21482, "util": 99, "name": "python3"}],
            {"temp": 56, "power": 695.96, "util": 99},
            (2026, 12, 2, 12, 18, 41),
        ),
        (
            "table-two-procs.txt",
            [
                {"pid": 441, "gpus": [0], "mem_mib": 10758, "util": 0, "name": "python3"},
                {"pid": 442, "gpus": [0], "mem_mib": 5638, "util": 0, "name": "python3"},
            ],
            {"temp": 42, "power": 124.2},
            (2026, 12, 2, 12, 57, 32),
        ),
    ],
)
def test_table_renders_byte_for_byte(fixture, uses, values, when):
    states = _fixture_state(HOST1, uses, _t(*when), **values)
    got = render_table(states, driver="580.159.04", cuda="13.0", now=_t(*when))
    assert got == fx(fixture)


def test_xml_and_text_query_match_fixture_layout():
    now = _t(2026, 12, 2, 12, 18, 47)
    uses = [{"pid": 432, "gpus": [0], "mem_mib": 21482, "util": 99, "name": "python3"}]
    states = _fixture_state(
        HOST1,
        uses,
        now,
        uuid=UUID1,
        serial="1654524155484",
        util=99,
        mem_util=23,
        temp=59,
        mem_temp=51,
        power_avg=690.45,
        power_inst=627.98,
        mem_power=129.14,
        sm=1485,
        video=1515,
        tx_kbs=8056,
        rx_kbs=14469,
        sw_power_cap_us=8448419,
    )
    xml = render_xml(states, driver="580.159.04", cuda="13.0", now=now, attached=1)
    diff = [
        d for d in difflib.ndiff(fx("q-loaded.xml").splitlines(), xml.splitlines()) if d[:1] in "+-"
    ]
    assert len(diff) == 2 and all("<pdi>" in d for d in diff)  # GPU PDI is unknowable
    states[0].update(
        temp=60,
        power_avg=690.90,
        power_inst=708.48,
        mem_power=128.33,
        tx_kbs=6654,
        rx_kbs=15511,
        sw_power_cap_us=8548449,
    )
    text = render_text_query(states, driver="580.159.04", cuda="13.0", now=now, attached=1)
    diff = [
        d
        for d in difflib.ndiff(fx("q-loaded.txt").splitlines(), text.splitlines())
        if d[:1] in "+-"
    ]
    assert all("GPU PDI" in d or "T.Limit Temp" in d for d in diff), diff


def test_q_display_sections(h200, holder):
    p = holder()
    gpustate.register_gpu_use(h200, p.pid, [0], 10758, util=0)
    mem = smi(h200, "-q", "-d", "MEMORY").stdout
    ref = fx("q-d-MEMORY.txt")
    assert [ln.split(":")[0] for ln in mem.splitlines()][4:] == [
        ln.split(":")[0] for ln in ref.splitlines()
    ][4:]
    assert "Used                                           : 10767 MiB" in mem
    pids = smi(h200, "-q", "-d", "PIDS").stdout
    assert f"        Process ID                        : {p.pid}\n" in pids
    assert "            Used GPU Memory               : 10758 MiB\n" in pids


def test_cli_table_xml_list_four_a6000(tmp_path, holder):
    root = make_host(tmp_path, gpu_model="A6000", gpu_count=4, uuid_seed="ws1")
    p = holder()
    gpustate.register_gpu_use(root, p.pid, [1, 2], 20000, util=100, name="python3")
    samples = parse_gpu_csv(smi(root, Q, "--format=csv,noheader,nounits").stdout)
    assert [s.index for s in samples] == [0, 1, 2, 3]
    assert {s.name for s in samples} == {"NVIDIA RTX A6000"}
    assert {s.mem_total_mib for s in samples} == {49140} and {s.power_limit_w for s in samples} == {
        300.0
    }
    assert all(
        s.fan_pct is not None and s.ecc_uncorrected is None and s.mig_mode is None for s in samples
    )
    assert len({s.uuid for s in samples}) == 4 and len({s.bus_id for s in samples}) == 4
    idle, busy = samples[0], samples[1]
    assert idle.pstate == "P8" and idle.clock_sm_mhz == 210 and idle.power_draw_w < 40
    assert busy.pstate == "P2" and busy.util_gpu >= 99 and busy.power_draw_w > 280
    assert busy.mem_used_mib > 20000 and busy.fan_pct > idle.fan_pct
    assert samples[2].mem_used_mib == busy.mem_used_mib
    # -i selection, by index and by uuid
    sel = parse_gpu_csv(smi(root, "-i", f"1,{samples[3].uuid}", Q, "--format=csv").stdout)
    assert [s.index for s in sel] == [1, 3]
    apps = parse_compute_apps(smi(root, APPS + ",gpu_bus_id", "--format=csv").stdout)
    assert [(a.gpu_uuid, a.used_mib) for a in apps] == [
        (samples[1].uuid, 20000),
        (samples[2].uuid, 20000),
    ]
    # default table: 4 GPU blocks, one process row per GPU used
    table = smi(root).stdout.splitlines()
    assert all(len(ln) == 91 for ln in table[1:] if ln)
    assert sum("NVIDIA RTX A6000" in ln for ln in table) == 4
    assert (
        sum(re.search(rf"\s{p.pid}\s+C\s+python3\s+20000MiB", ln) is not None for ln in table) == 2
    )
    # -q -x: well formed, 4 GPUs, consistent with the query path
    xml = smi(root, "-q", "-x").stdout
    tree = ET.fromstring(xml.split("\n", 2)[2])
    gpus = tree.findall("gpu")
    assert tree.findtext("attached_gpus") == "4" and len(gpus) == 4
    assert [g.findtext("uuid") for g in gpus] == [s.uuid for s in samples]
    assert gpus[1].findtext("fb_memory_usage/total") == "49140 MiB"
    assert gpus[1].findtext("processes/process_info/pid") == str(p.pid)
    assert gpus[0].findtext("product_name") == "NVIDIA RTX A6000"
    # -q text: one section per GPU
    text = smi(root, "-q", "-i", "2").stdout
    assert (
        text.count("\nGPU 0000") == 1
        and "Attached GPUs                                          : 4" in text
    )
    # -L
    listing = smi(root, "-L").stdout.splitlines()
    assert len(listing) == 4
    assert all(
        re.fullmatch(rf"GPU {i}: NVIDIA RTX A6000 \(UUID: GPU-[0-9a-f-]{{36}}\)", ln)
        for i, ln in enumerate(listing)
    )


def test_list_format_like_fixture(h200):
    got = smi(h200, "-L").stdout
    ref = fx("list-L.txt")
    assert re.sub(r"GPU-[0-9a-f-]+", "U", got) == re.sub(r"GPU-[0-9a-f-]+", "U", ref)


def test_uuids_deterministic_and_distinct(tmp_path):
    a = make_host(tmp_path, gpu_count=2, uuid_seed="hostA")
    first = smi(a, "-L").stdout
    assert smi(a, "-L").stdout == first
    gpustate.write_host(a, uuid_seed="hostB")
    assert smi(a, "-L").stdout != first


def test_main_in_process_with_root(h200, capsys):
    assert sim.main(["-L"], root=str(h200)) == 0
    assert capsys.readouterr().out.startswith("GPU 0: NVIDIA H200 (UUID: GPU-")


def test_host_json_roundtrip(tmp_path):
    root = tmp_path / "h"
    data = gpustate.write_host(root, gpu_model="A6000", gpu_count=2)
    assert data == {"gpu_model": "A6000", "gpu_count": 2}
    host = gpustate.load_host(root)
    assert host["nvidia_smi"] == "ok" and host["pid_offset"] == 0 and host["uuid_seed"] == "h"
    assert json.loads((root / "sim" / "host.json").read_text())["gpu_count"] == 2
    with pytest.raises(ValueError):
        gpustate.write_host(root, nvidia_smi="explode")


def test_running_it_in_process_leaves_sigpipe_alone(h200):
    """The simulated nvidia-smi called in-process once set SIGPIPE to SIG_DFL for the caller: the
    next broken pipe killed the whole test run (exit 141)."""
    import signal

    before = signal.getsignal(signal.SIGPIPE)
    assert sim.main(["-L"], root=str(h200)) == 0
    assert signal.getsignal(signal.SIGPIPE) == before
