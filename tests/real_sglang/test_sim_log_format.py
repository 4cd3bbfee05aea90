"""The simulator's decode lines against SGLang's own decode regex (the real package's
log_parser)."""

from __future__ import annotations

import json
import subprocess

from sglconsole.core.sglang_log import parse_line
from sglconsole.sim.host.root import create_host
from tests.sim.test_sim_server import run_load, servers, start  # noqa: F401 - the fixture

MATCHER = r"""
import json, re, sys
from sglang.srt.debug_utils.log_parser import _PATTERN_DECODE
pattern = re.compile(_PATTERN_DECODE)
out = []
for line in open(sys.argv[1]):
    m = pattern.search(line)
    out.append(None if m is None else {k: v for k, v in m.groupdict().items() if v is not None})
print(json.dumps(out))
"""


def sglang_matches(real_python: str, lines: list[str], tmp_path) -> list:
    path = tmp_path / "lines.log"
    path.write_text("\n".join(lines) + "\n")
    result = subprocess.run(
        [real_python, "-c", MATCHER, str(path)], capture_output=True, text=True, timeout=120
    )
    assert result.returncode == 0, result.stderr[-2000:]
    return json.loads(result.stdout)


def decode_lines(server) -> list[str]:
    return [
        line
        for line in server.text().splitlines()
        if "Decode batch" in line and "#running-req: 0" not in line
    ]


def test_sglangs_regex_reads_the_simulators_decode_lines(real_python, tmp_path, servers):  # noqa: F811
    root = create_host(tmp_path / "h", models=("Qwen3-8B",), sglang={"startup_s": 0.2})
    server = start(
        servers,
        root,
        [
            "--model-path",
            str(root / "models" / "Qwen3-8B"),
            "--decode-log-interval",
            "10",
            "--enable-mfu-metrics",
        ],
        env={"CUDA_VISIBLE_DEVICES": "0"},
    )
    server.wait_ready()
    run_load(server, 2.5)
    lines = decode_lines(server)
    assert len(lines) >= 3
    matches = sglang_matches(real_python, lines, tmp_path)
    for line, match in zip(lines, matches, strict=True):
        assert match is not None, line
        ours = parse_line(line)
        assert float(match["gen_throughput"]) == ours.gen_throughput
        assert (
            int(match["num_running_req"]) == ours.running_req
            and int(match["queue_req"]) == ours.queue_req
        )
        assert (
            float(match["token_usage"]) == ours.token_usage
            and int(match["num_token"]) == ours.token
        )


def test_sglangs_regex_misses_0_5_23s_own_default_line(real_python, tmp_path, servers):  # noqa: F811
    """SGLang 0.5.23 ends decode lines at `#queue-req: N` with no comma, which its own regex
    requires: the simulator writes what SGLang writes, so the regex misses both alike
    (parse_line does not)."""
    root = create_host(tmp_path / "h", models=("Qwen3-8B",), sglang={"startup_s": 0.2})
    server = start(
        servers,
        root,
        ["--model-path", str(root / "models" / "Qwen3-8B"), "--decode-log-interval", "10"],
        env={"CUDA_VISIBLE_DEVICES": "0"},
    )
    server.wait_ready()
    run_load(server, 2.0)
    lines = decode_lines(server)
    assert lines and all(line.rstrip().split("#queue-req: ")[1].isdigit() for line in lines)
    assert sglang_matches(real_python, lines, tmp_path) == [None] * len(lines)
    assert all(parse_line(line).gen_throughput is not None for line in lines)
