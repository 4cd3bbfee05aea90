"""Ready-made simulated fleets: the demo's four hosts (ct130: the seed story on 0.5.11), profiles.

`{models}` in an argument becomes the host's model folder as the host sees it.
"""

from __future__ import annotations

import shlex

from sglconsole.sim.fleet.start import HostSpec, ServerSpec

PROVEN_27B = [
    "--model-path",
    "{models}/Qwen3.6-27B",
    "--port",
    "30000",
    "--host",
    "0.0.0.0",
    "--tp-size",
    "2",
    "--mem-fraction-static",
    "0.88",
    "--context-length",
    "131072",
    "--max-running-requests",
    "16",
    "--mamba-full-memory-ratio",
    "0.5",
    "--reasoning-parser",
    "qwen3",
    "--tool-call-parser",
    "qwen3_coder",
    "--speculative-algorithm",
    "NEXTN",
    "--speculative-num-steps",
    "3",
    "--speculative-eagle-topk",
    "1",
    "--speculative-num-draft-tokens",
    "4",
    "--trust-remote-code",
    "--decode-log-interval",
    "20",
]

# what someone relaunched from shell history: half the speculative steps and draft tokens, no
# request cap (--max-running-requests) and none of the memory settings: what slows a 0.5.23
# server (SGLANG_ENABLE_SPEC_V2 is not read there: spec V2 is the only worker)
DRIFTED_27B = [
    "--model-path",
    "{models}/Qwen3.6-27B",
    "--tp-size",
    "2",
    "--speculative-algo",
    "NEXTN",
    "--speculative-num-draft-tokens",
    "2",
    "--speculative-num-steps",
    "1",
    "--decode-log-interval",
    "20",
]

QWEN8B = [
    "--model-path",
    "{models}/Qwen3-8B",
    "--host",
    "0.0.0.0",
    "--tp-size",
    "1",
    "--mem-fraction-static",
    "0.85",
    "--max-running-requests",
    "64",
    "--enable-metrics",
    "--decode-log-interval",
    "40",
]

NEXT_059 = [
    "--model-path",
    "{models}/Qwen3-Next-80B-A3B",
    "--host",
    "0.0.0.0",
    "--tp-size",
    "1",
    "--mem-fraction-static",
    "0.85",
    "--speculative-algorithm",
    "NEXTN",
    "--speculative-num-steps",
    "3",
    "--speculative-eagle-topk",
    "1",
    "--speculative-num-draft-tokens",
    "4",
    "--decode-log-interval",
    "20",
]


# the model card's hint that ended the seed story's hunt: the release it needs is newer
NEXT_CARD = (
    "# Qwen3-Next-80B-A3B\n\nServe it with SGLang: `pip install 'sglang>=0.5.10'`, then\n"
    "`python -m sglang.launch_server --model-path Qwen/Qwen3-Next-80B-A3B ...`\n"
)


def demo_profiles() -> dict:
    return {
        "qwen27b-tp2-mtp": {
            "description": "Qwen3.6-27B on 2x A6000, TP=2, MTP speculation (proven)",
            "args": PROVEN_27B,
            "requires_sglang": ">=0.5.10",
            "baseline": {"gen_throughput": 64.0, "accept_len": 3.2, "concurrency": 1},
            "startup_timeout": 120,
        },
        "qwen8b-tp1": {
            "description": "Qwen3-8B, one server per H200",
            "args": QWEN8B,
            "baseline": {"gen_throughput": 95.0, "concurrency": 2},
            "startup_timeout": 120,
        },
        "qwen-next-mtp": {
            "description": "Qwen3-Next-80B, NEXTN speculation",
            "args": NEXT_059,
            "env": {"SGLANG_ENABLE_SPEC_V2": "1"},
            "baseline": {"gen_throughput": 55.0, "accept_len": 3.0, "concurrency": 1},
            "startup_timeout": 120,
        },
        "qwen27b-0511": seed_profile(),
    }


def proven_27b_unit() -> str:
    """ct129's systemd unit: the proven launch as ops keep it, to try `capture --from-systemd`."""
    command = shlex.join(["{python}", "-m", "sglang.launch_server", *PROVEN_27B])
    return (
        "# sglang-30000.service: the proven Qwen3.6-27B launch, kept by ops\n"
        "[Unit]\nDescription=SGLang Qwen3.6-27B TP2 MTP\nAfter=network-online.target\n\n"
        "[Service]\nType=simple\nUser=root\n"
        'Environment="CUDA_VISIBLE_DEVICES=0,1"\n'
        f"ExecStart={command}\nRestart=on-failure\n\n"
        "[Install]\nWantedBy=multi-user.target\n"
    )


def demo_hosts(startup_s: float = 3.0) -> list[HostSpec]:
    return [
        HostSpec(
            name="ct129",
            gpu_model="A6000",
            gpu_count=2,
            pid_offset=3_000_000,  # an LXC container: nvidia-smi reports host PIDs
            exec_prefix=["pct", "exec", "129", "--"],
            models=("Qwen3.6-27B",),
            sglang={"startup_s": startup_s, "load": {"concurrency": 1, "max_tokens": 400}},
            servers=[ServerSpec(30000, "qwen27b-tp2-mtp", [0, 1], running=DRIFTED_27B)],
            units={"sglang-30000.service": proven_27b_unit()},
        ),
        HostSpec(
            name="h200x4",
            gpu_model="H200",
            gpu_count=4,
            models=("Qwen3-8B",),
            sglang={"startup_s": startup_s, "load": {"concurrency": 2, "max_tokens": 300}},
            servers=[
                ServerSpec(
                    30000 + gpu,
                    "qwen8b-tp1",
                    [gpu],
                    running=None if gpu == 3 else [*QWEN8B, "--port", str(30000 + gpu)],
                )
                for gpu in range(4)
            ],
        ),
        HostSpec(
            name="old059",
            gpu_model="H200",
            gpu_count=1,
            sglang_version="0.5.9",
            models=("Qwen3-Next-80B-A3B",),
            sglang={
                "startup_s": startup_s,
                "degenerate": ["0.5.9", "0.5.10"],  # the loop the fix in 0.5.11 ended
                "load": {"concurrency": 1, "max_tokens": 200},
            },
            servers=[
                ServerSpec(
                    30000,
                    "qwen-next-mtp",
                    [0],
                    running=NEXT_059,
                    running_env={"SGLANG_ENABLE_SPEC_V2": "1"},
                )
            ],
            files={"models/Qwen3-Next-80B-A3B/README.md": NEXT_CARD},
        ),
        seed_host(startup_s=startup_s),  # the seed story, still on 0.5.11
    ]


# The seed story, on SGLang 0.5.11: radix cache with MTP speculation on the hybrid Qwen3.6-27B
# needed `--mamba-scheduler-strategy extra_buffer` and SGLANG_ENABLE_SPEC_V2=1 (0.5.11's
# server_args says so: "please use --mamba-scheduler-strategy extra_buffer and set
# SGLANG_ENABLE_SPEC_V2=1"; its registry reads the switch, default on, so `=0` selects spec V1).
# 0.5.23 has neither: the flag is gone (argparse rejects it) and the variable is not read.
SEED_27B_0511 = [*PROVEN_27B, "--mamba-scheduler-strategy", "extra_buffer"]
SEED_ENV = {"SGLANG_ENABLE_SPEC_V2": "1"}


def seed_profile() -> dict:
    return {
        "description": "Qwen3.6-27B, TP=2, MTP, as proven on SGLang 0.5.11 (the seed story)",
        "args": SEED_27B_0511,
        "env": dict(SEED_ENV),
        "requires_sglang": "==0.5.11",
        "baseline": {"gen_throughput": 64.0, "accept_len": 3.2, "concurrency": 1},
        "startup_timeout": 120,
    }


def seed_host(
    name: str = "ct130",
    startup_s: float = 3.0,
    running_env: dict | None = None,
) -> HostSpec:
    """A 2x A6000 host still on SGLang 0.5.11, running the seed story's launch (profile
    `qwen27b-0511`); `running_env` stands for what its process really got."""
    return HostSpec(
        name=name,
        gpu_model="A6000",
        gpu_count=2,
        sglang_version="0.5.11",
        models=("Qwen3.6-27B",),
        sglang={"startup_s": startup_s, "load": {"concurrency": 1, "max_tokens": 400}},
        servers=[
            ServerSpec(
                30000,
                "qwen27b-0511",
                [0, 1],
                running=SEED_27B_0511,
                running_env=dict(SEED_ENV) if running_env is None else running_env,
            )
        ],
    )


def container_host(kind: str, name: str | None = None, startup_s: float = 3.0) -> HostSpec:
    """A 2x H200 host whose Qwen3-8B server runs in a `kind` ("docker"|"podman") container, the
    way SGLang's install guide runs one (on the host's network), under a light load."""
    return HostSpec(
        name=name or f"gpu-{kind}",
        gpu_model="H200",
        gpu_count=2,
        models=("Qwen3-8B",),
        sglang={"startup_s": startup_s, "load": {"concurrency": 2, "max_tokens": 300}},
        engines=(kind,),
        servers=[
            ServerSpec(
                30000, "qwen8b-tp1", [0], running=[*QWEN8B, "--port", "30000"], container=kind
            )
        ],
    )


def demo_fleet_hosts(startup_s: float = 3.0) -> tuple[list[HostSpec], str | None]:
    """The demo's hosts, and a fifth, gpu-docker (its server in a real Docker container), where
    Docker can run here: (the hosts, one line why there is no containerised host, or None)."""
    from sglconsole.sim.fleet.engines import DOCKER, unavailable

    hosts = demo_hosts(startup_s)
    reason = unavailable(DOCKER)
    if reason is not None:
        return hosts, f"no containerised host in this demo: {reason}"
    return [*hosts, container_host(DOCKER, name="gpu-docker", startup_s=startup_s)], None


FRESHNESS_PORT = 39999


def bench_hosts(count: int = 16, servers: int = 4) -> list[HostSpec]:
    """The benchmark fleet: `count` 4xH200 hosts, `servers` TP=1 servers each, each under load and
    logging a decode line about once a second; plus, per host, a configured-but-idle server entry
    whose log the benchmark writes into (to time freshness)."""
    args = [
        "--model-path",
        "{models}/Qwen3-8B",
        "--host",
        "0.0.0.0",
        "--mem-fraction-static",
        "0.85",
        "--max-running-requests",
        "64",
        "--decode-log-interval",
        "50",
    ]
    return [
        HostSpec(
            name=f"gpu{index:02d}",
            gpu_model="H200",
            gpu_count=max(servers, 1),
            models=("Qwen3-8B",),
            sglang={
                "startup_s": 0.5,
                "tick_s": 0.25,
                "child_poll_s": 5.0,
                "load": {"concurrency": 1, "max_tokens": 4000},
            },
            servers=[
                ServerSpec(
                    30000 + gpu, "qwen8b-tp1", [gpu], running=[*args, "--port", str(30000 + gpu)]
                )
                for gpu in range(servers)
            ]
            + [ServerSpec(FRESHNESS_PORT, "qwen8b-tp1", [], running=None)],
        )
        for index in range(count)
    ]
