"""Pure modules: systemd units, degeneracy, drift, secrets, process analysis, hosts.yaml edits."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from sglconsole.config.edit import set_entry
from sglconsole.core import degeneracy, drift, systemd_unit
from sglconsole.core.nvidia_smi import ComputeApp, GpuSample
from sglconsole.core.processes import ProcInfo, analyse, launch_args, port_of
from sglconsole.core.secrets import mask_argv, mask_env


def test_unit_continuations_quotes_environment_and_reset():
    unit = """[Service]
Environment="A=1" B=two
Environment="C=with space"
ExecStart=/bin/old
ExecStart=
ExecStart=-/usr/bin/python3 -m sglang.launch_server \\
  --served-model-name "my model" \\
  # a comment inside the continuation
  --x ${A} $B 'single q'
EnvironmentFile=-/etc/x.env
"""
    command = systemd_unit.parse_unit(unit, {"/etc/x.env": "B=from-file\n# c\nD='d'\n"})
    assert command.argv == [
        "/usr/bin/python3",
        "-m",
        "sglang.launch_server",
        "--served-model-name",
        "my model",
        "--x",
        "1",
        "from-file",
        "single q",
    ]  # files override Environment=
    assert command.env == {"A": "1", "B": "from-file", "C": "with space", "D": "d"}


def test_unit_without_execstart_is_an_error():
    with pytest.raises(ValueError, match="no ExecStart"):
        systemd_unit.parse_unit("[Service]\nType=simple\n")


@pytest.mark.parametrize(
    "text",
    [
        "prime prime prime prime prime",
        "2 + 2 = 2.2 + 2 = 2.2 + 2",
        "ab" * 40,
        "The answer is the answer is the answer is the answer is the answer is",
    ],
)
def test_degenerate_answers(text):
    assert degeneracy.check(text).degenerate


@pytest.mark.parametrize(
    "text",
    [
        "4",
        "The answer is 4.",
        "def f(x):\n    return x + 1\n\ndef g(y):\n    return y * 2\n",
        "Tensor parallelism splits layers across GPUs; speculative decoding drafts tokens ahead.",
    ],
)
def test_healthy_answers(text):
    assert not degeneracy.check(text).degenerate


@given(st.text(max_size=400))
def test_degeneracy_never_raises(text):
    degeneracy.check(text)


def test_drift_states():
    rows = drift.compare_flags(
        {"a": 1, "b": 2, "c": 3, "d": 4, "port": 30000},
        {"a", "b", "c"},
        {"a": 1, "b": 5, "c": 9, "d": 7, "port": 30001},
        {"a", "b", "d"},
        {"c": 8},
        lambda d: f"--{d}",
        server_port=30001,
    )
    states = {r.name: r.state for r in rows}
    assert states == {
        "a": drift.State.SAME,
        "b": drift.State.DIFFERENT,
        "c": drift.State.DEFAULTED_DIFFERENTLY,
        "d": drift.State.ONLY_RUNNING,
        "port": drift.State.SAME,
    }


def test_drift_masks_secrets_in_every_output():
    report = drift.build(
        profile_values={"api_key": "sk-profile"},
        profile_given={"api_key"},
        running_values={"api_key": "sk-running"},
        running_given={"api_key"},
        flag_of=lambda d: "--api-key",
        profile_env={"HF_TOKEN": "hf_a"},
        running_env={"HF_TOKEN": "hf_b"},
    )
    text = str(report.to_dict())
    assert "sk-" not in text and "hf_" not in text and report.differs


def test_mask_argv_and_env():
    assert mask_argv(
        ["x", "--api-key", "s", "--admin-api-key=t", "--speculative-num-draft-tokens", "4"]
    ) == ["x", "--api-key", "****", "--admin-api-key=****", "--speculative-num-draft-tokens", "4"]
    assert mask_env({"HF_TOKEN": "x", "SGLANG_MAX_TOKENS": "5", "OPENAI_API_KEY": "y"}) == {
        "HF_TOKEN": "****",
        "SGLANG_MAX_TOKENS": "5",
        "OPENAI_API_KEY": "****",
    }


def proc(pid, ppid, argv, main=False, pgid=None, sid=None, state="S", env=None):
    return ProcInfo(
        pid, ppid, pgid or pid, sid or pid, state, argv[0][:15], tuple(argv), 0.0, 0, main, env
    )


def test_servers_children_zombies_orphans_and_unaccounted_gpu_memory():
    main = proc(
        10,
        1,
        ["/e/python3", "-m", "sglang.launch_server", "--port", "30001", "--tp-size", "2"],
        main=True,
    )
    procs = [
        main,
        proc(11, 10, ["sglang::scheduler_TP0"], pgid=10, sid=10),
        proc(12, 10, ["sglang::detokenizer"], pgid=10, sid=10, state="Z"),
        proc(20, 1, ["sglang::scheduler_TP1"], pgid=15, sid=15),
    ]
    gpus = [GpuSample(index=0, uuid="GPU-0"), GpuSample(index=1, uuid="GPU-1")]
    apps = [
        ComputeApp(11, "sglang::scheduler_TP0", 1000, "GPU-0"),
        ComputeApp(20, "x", 900, "GPU-1"),
        ComputeApp(33, "python3", 500, "GPU-1"),
    ]
    view = analyse(procs, apps, gpus)
    (server,) = view.servers
    assert server.port == 30001 and server.gpus == (0,) and server.gpu_mem_mib == 1000
    assert [z.pid for z in server.zombies] == [12]
    assert [o.pid for o in view.orphans] == [20]
    assert [a.pid for a in view.unaccounted] == [20, 33]
    assert not view.foreign_pids


def test_container_pids_fall_back_to_cuda_visible_devices():
    main = proc(
        10,
        1,
        ["python3", "-m", "sglang.launch_server", "--tp-size", "2"],
        main=True,
        env={"CUDA_VISIBLE_DEVICES": "2,3"},
    )
    view = analyse(
        [main],
        [ComputeApp(900010, "sglang::scheduler_TP0", 1000, "GPU-2")],
        [GpuSample(index=2, uuid="GPU-2")],
    )
    assert view.foreign_pids and view.servers[0].gpus == (2, 3) and view.notes


def test_argv_helpers():
    argv = ("/x/sglang", "serve", "--model-path", "m", "--port=30005")
    assert (
        launch_args(argv) == ("--model-path", "m", "--port=30005")
        and port_of(launch_args(argv)) == 30005
    )
    assert port_of(("--model-path", "m")) == 30000


def test_set_entry_keeps_comments_and_replaces_blocks():
    text = (
        "# top\nhosts: {}\nprofiles:\n  # first\n  a:\n    args: [x]  # inline\n\n"
        "  # second\n  b:\n    args: [y]\n"
    )
    added = set_entry(text, ("profiles",), "c", {"args": ["z"]})
    assert added.startswith(text.rstrip("\n")) and added.endswith("  c:\n    args:\n    - z\n")
    replaced = set_entry(text, ("profiles",), "a", {"args": ["new"]})
    assert (
        "# second" in replaced
        and "# first" in replaced
        and "[x]" not in replaced
        and "  b:\n    args: [y]" in replaced
    )


def test_journal_entries_text_bytes_and_garbage():
    from sglconsole.remote.feeds.journal import journal_entry

    assert journal_entry('{"MESSAGE": "Decode batch, #running-req: 1", "__CURSOR": "s=1;i=2"}') == (
        "Decode batch, #running-req: 1",
        "s=1;i=2",
    )
    assert journal_entry('{"MESSAGE": [104, 105, 255], "__CURSOR": "c"}') == ("hi\ufffd", "c")
    assert journal_entry("not json") == (None, None)
    assert journal_entry("[1, 2]") == (None, None)
    assert journal_entry('{"MESSAGE": {"x": 1}, "__CURSOR": 5}') == (None, None)
