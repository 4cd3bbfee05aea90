"""The pure parts of the signs before an outage: the memory trend and its estimate, the kernel
log's Xid and OOM-kill lines, nvidia-smi's ECC and row-remap counters."""

from __future__ import annotations

from hypothesis import example, given
from hypothesis import strategies as st

from sglconsole.core.kernel_log import bus_key, parse_kernel_line
from sglconsole.core.memory_trend import MIN_FALL_KB_S, MIN_SPAN_S, eta_words, trend
from sglconsole.core.nvidia_smi.health import parse_health_csv


@given(
    start_kb=st.floats(min_value=1e6, max_value=2e9),
    fall_kb_s=st.floats(min_value=2 * MIN_FALL_KB_S, max_value=1e5),
    interval=st.floats(min_value=1, max_value=30),
)
@example(start_kb=16 * 2**20, fall_kb_s=65536, interval=1)
def test_a_steady_fall_gives_the_time_it_runs_out(start_kb, fall_kb_s, interval):
    samples = [(step * interval, start_kb - fall_kb_s * step * interval) for step in range(80)]
    samples = [(when, value) for when, value in samples if value > 0]
    if len(samples) < 10 or samples[-1][0] - samples[0][0] < MIN_SPAN_S:
        return  # runs out before the trend may be told
    found = trend(samples)
    assert found.steady and found.eta_s is not None
    exact = samples[-1][1] / fall_kb_s
    assert abs(found.eta_s - exact) <= 0.01 * exact + 1


@given(
    level=st.floats(min_value=1e6, max_value=2e9),
    noise=st.lists(st.floats(min_value=-1e5, max_value=1e5), min_size=10, max_size=60),
)
def test_no_estimate_without_a_fall_beyond_noise(level, noise):
    samples = [(step * 10.0, level + wobble) for step, wobble in enumerate(noise)]
    found = trend(samples)
    # noise may fit a line by chance; an estimate then only for a real fall, never negative
    assert found.eta_s is None or (found.slope_kb_s < -MIN_FALL_KB_S and found.eta_s >= 0)


def test_a_step_then_a_leak_is_judged_on_the_leak():
    flat = [(float(second), 1.9e9) for second in range(0, 300, 10)]
    leak = [(300.0 + second, 16e6 - 65536 * second) for second in range(0, 120, 2)]
    found = trend(flat + leak)
    assert found.steady and abs(found.slope_kb_s + 65536) < 1
    assert eta_words(found.eta_s).startswith("out of memory in ~")


def test_a_sawtooth_is_not_steady():
    saw = [(float(second), 1e8 + (second % 20) * 1e6) for second in range(0, 600, 2)]
    assert trend(saw).eta_s is None
    assert trend([]).slope_kb_s is None and trend([(1.0, 5.0)]).eta_s is None


def test_dmesg_and_journal_lines_of_an_xid_and_an_oom_kill():
    xid = parse_kernel_line(
        "2026-12-05T21:40:01,123456+00:00 NVRM: Xid (PCI:0000:18:00): 79, pid=4242, "
        "name=python3, GPU has fallen off the bus."
    )
    assert (xid.kind, xid.xid, xid.pid, xid.comm, xid.bus) == ("xid", 79, 4242, "python3", "18:00")
    assert abs(xid.time - 1796506801.123456) < 1e-3
    unknown = parse_kernel_line(
        "2026-12-05T21:40:01+0000 gpu4 kernel: NVRM: Xid (PCI:0000:b7:00): 48, "
        "pid='<unknown>', name=<unknown>, An uncorrectable double bit error (DBE)"
    )
    assert unknown.kind == "xid" and unknown.pid is None and unknown.bus == "b7:00"
    oom = parse_kernel_line(
        "2026-12-05T21:41:00,000000+00:00 Out of memory: Killed process 4243 (sglang::schedul) "
        "total-vm:300kB, anon-rss:100kB, file-rss:0kB, shmem-rss:0kB, UID:0 pgtables:1kB"
    )
    assert (oom.kind, oom.pid, oom.comm, oom.rss_kb) == ("oom_kill", 4243, "sglang::schedul", 100)
    assert parse_kernel_line("2026-12-05T21:41:00,000000+00:00 usb 1-1: new device") is None
    assert (
        parse_kernel_line("[  12.5] NVRM: loading NVIDIA UNIX x86_64 Kernel Module").kind == "nvrm"
    )
    assert bus_key("00000000:18:00.0") == bus_key("PCI:0000:18:00") == "18:00"


def test_health_counters_and_what_a_gpu_cannot_say():
    (healthy, worn, old) = parse_health_csv(
        "0, 00000000:18:00.0, 0, 0, 0, 0, No, No\n"
        "1, 00000000:2A:00.0, 12, 1, 3, 0, Yes, No\n"
        "2, 00000000:3A:00.0, [N/A], [N/A], [N/A], [N/A], [N/A], [N/A]\n"
        "garbage line\n"
    )
    assert healthy.ecc_corrected == 0 and healthy.remap_pending is False
    assert (worn.ecc_corrected, worn.ecc_uncorrected, worn.remapped_correctable) == (12, 1, 3)
    assert worn.remap_pending is True
    assert old.ecc_corrected is None and old.remap_failure is None  # unknown, never 0


def test_the_oom_killers_line_before_the_kill_names_the_victims_unit():
    context = parse_kernel_line(
        "2026-12-05T21:41:00,000000+00:00 oom-kill:constraint=CONSTRAINT_NONE,nodemask=(null),"
        "cpuset=/,mems_allowed=0-1,global_oom,task_memcg=/system.slice/sglang-30001.service,"
        "task=sglang::schedul,pid=4243,uid=0"
    )
    assert context.kind == "oom_context" and context.pid == 4243
    assert context.memcg == "/system.slice/sglang-30001.service"
