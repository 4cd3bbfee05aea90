"""sglconsole.core.nvidia_smi against the real H200 captures (tests/fixtures/nvidia-smi/h200)."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sglconsole.core.nvidia_smi import (
    GPU_QUERY_FIELDS,
    ComputeApp,
    GpuSample,
    GpuStreamAssembler,
    classify_nvidia_smi_error,
    gpu_query_args,
    parse_compute_apps,
    parse_gpu_csv,
    parse_gpu_line,
    throttle_reason_names,
)

FIX = Path(__file__).resolve().parents[1] / "fixtures" / "nvidia-smi" / "h200"
UUID1 = "GPU-28a2a3d1-2ecf-1974-b183-3710caffb3c8"
UUID2 = "GPU-cf4c2ca9-fc92-a47c-6044-b34ec07cabb3"


def fx(name: str) -> str:
    return (FIX / name).read_text()


# ----------------------------------------------------------------------------- query-gpu


def test_fields_are_the_fixture_fields():
    readme = fx("README.md")
    listed = readme.split("same order in every query-gpu file):", 1)[1].split("\n\n", 1)[0]
    assert tuple("".join(listed.split()).split(",")) == GPU_QUERY_FIELDS
    assert len(GPU_QUERY_FIELDS) == 20


def test_loaded_noheader_nounits_exact():
    [s] = parse_gpu_csv(fx("query-gpu-loaded.noheader-nounits.csv"))
    assert s == GpuSample(
        index=0,
        uuid=UUID1,
        name="NVIDIA H200",
        bus_id="00000000:00:06.0",
        driver="580.159.04",
        util_gpu=99,
        util_mem=22,
        mem_used_mib=21491,
        mem_total_mib=143771,
        mem_free_mib=121666,
        temperature_c=56,
        power_draw_w=695.87,
        power_limit_w=700.0,
        clock_sm_mhz=1515,
        clock_mem_mhz=3201,
        fan_pct=None,
        pstate="P0",
        mig_mode="Disabled",
        ecc_uncorrected=0,
        throttle_reasons=0x4,
    )
    assert s.throttle_names == ["sw_power_cap"]


def test_loaded_with_header_and_units():
    text = fx("query-gpu-loaded.csv")
    assert text.startswith("index, uuid, name")  # header present, skipped
    [s] = parse_gpu_csv(text)
    assert (s.util_gpu, s.util_mem, s.mem_used_mib, s.mem_total_mib, s.mem_free_mib) == (
        99,
        22,
        21491,
        143771,
        121666,
    )
    assert s.power_draw_w == 695.96 and s.power_limit_w == 700.0
    assert (s.clock_sm_mhz, s.clock_mem_mhz, s.fan_pct, s.throttle_reasons) == (1485, 3201, None, 4)


@pytest.mark.parametrize("name", ["query-gpu-idle.csv", "query-gpu-idle.noheader-nounits.csv"])
def test_idle(name):
    [s] = parse_gpu_csv(fx(name))
    assert s.index == 0 and s.uuid == UUID1
    assert (s.util_gpu, s.mem_used_mib, s.mem_free_mib, s.temperature_c) == (0, 0, 143156, 38)
    assert s.power_draw_w in (123.49, 123.50)
    assert s.clock_sm_mhz == 1980 and s.pstate == "P0"
    assert s.throttle_reasons == 1 and throttle_reason_names(s.throttle_reasons) == ["gpu_idle"]


def test_every_query_fixture_parses_to_one_gpu():
    for f in sorted(FIX.glob("query-gpu-*.csv")):
        samples = parse_gpu_csv(f.read_text())
        assert len(samples) == 1, f.name
        assert samples[0].mem_total_mib == 143771


@pytest.mark.parametrize(
    "marker",
    ["[N/A]", "[Not Supported]", "[Unknown Error]", "N/A", "", "[Insufficient Permissions]"],
)
def test_not_available_markers_become_none(marker):
    line = fx("query-gpu-loaded.noheader-nounits.csv").strip().split(", ")
    for pos in (5, 7, 11, 16, 19):
        cols = list(line)
        cols[pos] = marker
        s = parse_gpu_line(", ".join(cols))
        assert s is not None
        value = {
            5: s.util_gpu,
            7: s.mem_used_mib,
            11: s.power_draw_w,
            16: s.pstate,
            19: s.throttle_reasons,
        }[pos]
        assert value is None, pos


def test_garbage_lines_are_none():
    good = fx("query-gpu-loaded.noheader-nounits.csv").strip()
    assert parse_gpu_line(good) is not None
    assert parse_gpu_line("") is None
    assert parse_gpu_line("garbage") is None
    assert parse_gpu_line(good + ", extra") is None  # wrong column count
    assert parse_gpu_line(good.replace(", 99,", ", lots,", 1)) is None  # non-number
    assert parse_gpu_line(good.replace("0, GPU-", "x, GPU-", 1)) is None  # bad index
    assert parse_gpu_line(good.replace("GPU-28a2", "XXX-28a2")) is None  # not a uuid
    assert parse_gpu_line(good.replace("P0", "Q0")) is None
    header = fx("query-gpu-loaded.csv").splitlines()[0]
    assert parse_gpu_line(header) is None


def test_subset_of_fields_and_units():
    fields = ("index", "utilization.gpu", "memory.used", "power.draw")
    assert parse_gpu_line("3, 42 %, 1024 MiB, 99.50 W", fields) == GpuSample(
        index=3, util_gpu=42, mem_used_mib=1024, power_draw_w=99.5
    )
    # no index asked for
    s = parse_gpu_line("42, 1024", ("utilization.gpu", "memory.used"))
    assert s is not None and s.index == -1 and s.util_gpu == 42


def test_query_args():
    args = gpu_query_args(loop_ms=500)
    assert args[0] == "--query-gpu=" + ",".join(GPU_QUERY_FIELDS)
    assert args[1:] == ["--format=csv,noheader,nounits", "-lms", "500"]


def test_throttle_reason_names():
    assert throttle_reason_names(0) == []
    assert throttle_reason_names(None) == []
    assert throttle_reason_names(0x4) == ["sw_power_cap"]
    assert throttle_reason_names(0x1 | 0x40 | 0x100) == [
        "gpu_idle",
        "hw_thermal_slowdown",
        "display_clock_setting",
    ]
    assert throttle_reason_names(0x88) == ["hw_slowdown", "hw_power_brake_slowdown"]
    assert throttle_reason_names(0x1000) == ["0x1000"]


# ----------------------------------------------------------------------------- compute apps


def test_compute_apps_idle_header_only():
    assert parse_compute_apps(fx("compute-apps-idle.csv")) == []


def test_compute_apps_loaded():
    want = [ComputeApp(432, "python3", 21482, UUID1)]
    assert parse_compute_apps(fx("compute-apps-loaded.csv")) == want
    assert parse_compute_apps(fx("compute-apps-loaded.noheader-nounits.csv")) == want


def test_compute_apps_two_procs():
    with_header = parse_compute_apps(fx("compute-apps-two-procs.csv"))
    assert [(a.pid, a.used_mib) for a in with_header] == [(442, 5638), (441, 10758)]
    assert {a.gpu_bus_id for a in with_header} == {"00000000:00:06.0"}  # extra column, by header
    bare = parse_compute_apps(fx("compute-apps-two-procs.noheader-nounits.csv"))
    assert bare == [
        ComputeApp(442, "python3", 5638, UUID2),
        ComputeApp(441, "python3", 10758, UUID2),
    ]
    assert sum(a.used_mib for a in bare) == 16396


def test_compute_apps_odd_lines():
    text = (
        f"123, /usr/bin/python3 -m sglang, launch, 500 MiB, {UUID1}\n"
        "nonsense\n"
        f"77, x, [N/A], {UUID1}\n"
    )
    apps = parse_compute_apps(text)
    assert apps[0] == ComputeApp(123, "/usr/bin/python3 -m sglang, launch", 500, UUID1)
    assert apps[1] == ComputeApp(77, "x", None, UUID1)
    assert len(apps) == 2


# ----------------------------------------------------------------------------- streams

LOOP_FIELDS = ("index", "utilization.gpu", "memory.used", "power.draw")


def test_stream_one_gpu_lms500_fixture():
    asm = GpuStreamAssembler(LOOP_FIELDS)
    snaps = []
    for line in fx("loop-lms500.noheader-nounits.csv").splitlines():
        snaps.extend(asm.feed(line))
    # the first snapshot only completes on the wrap; after that every line is one
    assert len(snaps) == 5
    assert [s[0].power_draw_w for s in snaps] == [696.90, 691.10, 696.36, 691.97, 692.73]
    assert all(len(s) == 1 and s[0].mem_used_mib == 21491 for s in snaps)
    assert asm.garbage == 0 and asm.flush() is None


def test_stream_loop_l1_with_units():
    asm = GpuStreamAssembler(("index", "utilization.gpu"), expected_gpus=1)
    snaps = asm.feed_lines(fx("loop-l1.csv"))
    assert len(snaps) == 3 and all(s[0].util_gpu == 0 for s in snaps)


def _line(i: int, util: int) -> str:
    return f"{i}, {util}, {1000 * i}, {100 + i}.00"


def test_stream_four_gpus_with_garbage_and_header():
    asm = GpuStreamAssembler(LOOP_FIELDS)
    lines = ["index, utilization.gpu [%], memory.used [MiB], power.draw [W]"]
    for period in range(3):
        for i in range(4):
            lines.append(_line(i, period * 10 + i))
            if period == 1 and i == 1:
                lines.append("\x1b[31m?? junk")
                lines.append("0, 12")  # truncated line
    got = []
    for line in lines:
        got.extend(asm.feed(line))
    assert asm.headers == 1 and asm.garbage == 2
    # snapshot 1 completes on the wrap, snapshot 2 and 3 as soon as GPU 3 arrives
    assert len(got) == 3
    assert [[s.index for s in snap] for snap in got] == [[0, 1, 2, 3]] * 3
    assert [snap[2].util_gpu for snap in got] == [2, 12, 22]
    assert asm.flush() is None


def test_stream_expected_count_and_missing_gpu():
    asm = GpuStreamAssembler(LOOP_FIELDS, expected_gpus=2)
    assert asm.feed(_line(0, 1)) == []
    assert [[s.index for s in x] for x in asm.feed(_line(1, 1))] == [[0, 1]]
    # GPU 1 vanished: the wrap still closes the partial snapshot
    asm.feed(_line(0, 2))
    out = asm.feed(_line(0, 3))
    assert [[s.index for s in x] for x in out] == [[0]]
    assert [s.index for s in asm.flush()] == [0]


# ----------------------------------------------------------------------------- errors


def test_classify_errors():
    assert classify_nvidia_smi_error("0, 1\n", "", 0) is None
    no_driver = (
        "NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver. "
        "Make sure that the latest NVIDIA driver is installed and running.\n\n"
    )
    msg = classify_nvidia_smi_error(no_driver, "", 9)
    assert "driver" in msg and "exit 9" in msg and "\n" not in msg
    msg = classify_nvidia_smi_error("No devices were found\n", "", 6)
    assert "No devices were found" in msg and "exit 6" in msg
    msg = classify_nvidia_smi_error('Field "bogus.field" is not a valid field to query.\n\n', "", 2)
    assert '"bogus.field"' in msg and "exit 2" in msg
    msg = classify_nvidia_smi_error("", "bash: line 1: nvidia-smi: command not found\n", 127)
    assert "not found" in msg and "127" in msg
    msg = classify_nvidia_smi_error(
        "Unable to determine the device handle for GPU0000:00:06.0: Unknown Error\n", "", 15
    )
    assert "GPU0000:00:06.0" in msg and "exit 15" in msg
    msg = classify_nvidia_smi_error(
        "", "Failed to initialize NVML: Driver/library version mismatch\n", 18
    )
    assert "mismatch" in msg
    msg = classify_nvidia_smi_error(
        "Invalid combination of input arguments. Please run 'nvidia-smi -h' for help.\n", "", 2
    )
    assert "arguments" in msg
    assert classify_nvidia_smi_error("", "", 3) == "nvidia-smi failed (exit 3)"
    assert "exit 255" in classify_nvidia_smi_error("weird\nstuff", "", 255)
    assert "signal 9" in classify_nvidia_smi_error("", "", -9)
    assert "in time" in classify_nvidia_smi_error("", "", None)
    long = classify_nvidia_smi_error("x" * 5000, "", 1)
    assert len(long) < 250


# ----------------------------------------------------------------------------- fuzz

_TOKENS = [
    "0",
    "1",
    "99",
    "-3",
    "1e5",
    "0x4",
    "0xZZ",
    "[N/A]",
    "N/A",
    "",
    " ",
    "99 %",
    "12 MiB",
    "1.5 W",
    "P0",
    "P99",
    "GPU-",
    "GPU-x",
    "NVIDIA H200",
    "Disabled",
    "\x00",
    "é",
    ",",
    "\n",
    "nan",
    "inf",
    "9" * 400,
    "pid",
    "index",
]


@settings(max_examples=300, deadline=None)
@given(st.text())
def test_fuzz_arbitrary_text(text):
    lines = text.splitlines()
    one = parse_gpu_line(text)
    assert one is None or isinstance(one, GpuSample)
    samples = parse_gpu_csv(text)
    assert len(samples) <= len(lines) and all(isinstance(s, GpuSample) for s in samples)
    assert all(isinstance(a, ComputeApp) for a in parse_compute_apps(text))
    message = classify_nvidia_smi_error(text, text, 1)
    assert (
        isinstance(message, str) and message.strip()
    )  # exit code 1 is always a failure with a reason
    asm = GpuStreamAssembler()
    snapshots = asm.feed_lines(text)
    assert all(snapshot for snapshot in snapshots)  # a completed snapshot holds at least one GPU
    assert sum(map(len, snapshots)) <= len(samples)  # only lines that parse as GPUs
    asm.feed(text)
    rest = asm.flush()
    assert rest is None or all(isinstance(s, GpuSample) for s in rest)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(_TOKENS), min_size=0, max_size=24), st.integers(-300, 300))
def test_fuzz_csv_like(tokens, code):
    line = ", ".join(tokens)
    s = parse_gpu_line(line)
    assert s is None or isinstance(s, GpuSample)
    parse_gpu_line(line, ("index", "utilization.gpu", "clocks_throttle_reasons.active", "pstate"))
    for a in parse_compute_apps(line + "\n" + line):
        assert isinstance(a.pid, int)
    assert isinstance(classify_nvidia_smi_error(line, "", code) or "", str)
    asm = GpuStreamAssembler(("index", "utilization.gpu"))
    for t in tokens:
        for snap in asm.feed(f"{t}, {t}"):
            assert snap
