"""Container profiles in hosts.yaml: validated like the rest (file, line, field), and the launch
spec's `run -d` argv: exactly what starts, an argv list, secrets masked when shown."""

from __future__ import annotations

import shlex

import pytest

from sglconsole import config
from sglconsole.config.launch_spec import launch_spec
from sglconsole.errors import ConfigError

GOOD = """\
hosts:
  box:
    address: 127.0.0.1
    servers:
      - {port: 30000, profile: boxed, gpus: [2, 3]}
      - {port: 30001, profile: podded}
profiles:
  boxed:
    args: [--model-path, /models/Qwen3-8B, --api-key, "${API_KEY}"]
    env: {HF_TOKEN: "${HF_TOKEN}", SGLANG_ENABLE_JIT_DEEPGEMM: "0"}
    container:
      engine: docker
      image: lmsysorg/sglang:latest
      image_id: sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef
      options:
        shm-size: 32g
        ipc: host
        volumes: [/root/.cache/huggingface:/root/.cache/huggingface]
        env: {HF_HOME: /root/.cache/huggingface}
        restart: unless-stopped
  podded:
    python: /opt/venv/bin/python3
    args: --model-path /models/Qwen3-8B
    container:
      engine: podman
      image: localhost/sglang:0.5.23
      options: {gpus: all, name: "qwen-{port}", network: bridge, extra: [--ulimit, memlock=-1]}
"""


def write(tmp_path, text: str):
    path = tmp_path / "hosts.yaml"
    path.write_text(text)
    return path


def test_a_container_profile_loads_and_launches_as_its_engine_run(tmp_path):
    cfg = config.load(write(tmp_path, GOOD))
    environ = {"HF_TOKEN": "hf_secret", "API_KEY": "sk-secret"}
    spec = launch_spec(cfg, "box", 30000, environ=environ)
    image = "sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
    assert spec.command == [
        "docker", "run", "-d",
        "--name", "sglang-30000",
        "--label", "sglconsole.port=30000",
        "--network", "host",
        "--gpus", '"device=2,3"',  # the server entry's GPUs, as Docker's CSV wants them
        "--shm-size", "32g",
        "--ipc", "host",
        "--restart", "unless-stopped",
        "-v", "/root/.cache/huggingface:/root/.cache/huggingface",
        "-e", "HF_TOKEN=hf_secret",
        "-e", "SGLANG_ENABLE_JIT_DEEPGEMM=0",
        "-e", "HF_HOME=/root/.cache/huggingface",
        image,  # the proven image, not whatever the tag names today
        "python3", "-m", "sglang.launch_server",
        "--model-path", "/models/Qwen3-8B", "--api-key", "sk-secret", "--port", "30000",
    ]  # fmt: skip
    # the SGLang command inside is what preflight's parser and drift are given
    assert spec.args == ["--model-path", "/models/Qwen3-8B", "--api-key", "sk-secret", "--port",
                         "30000"]  # fmt: skip
    assert "CUDA_VISIBLE_DEVICES" not in spec.env  # inside, the pinned GPUs count from 0
    shown = spec.shown()
    assert "hf_secret" not in shown and "sk-secret" not in shown
    assert "HF_TOKEN=****" in shown and "--api-key '****'" in shown
    assert shlex.split(shown)[:3] == ["docker", "run", "-d"]


def test_podman_gets_cdi_devices_a_published_port_and_its_own_name(tmp_path):
    cfg = config.load(write(tmp_path, GOOD))
    spec = launch_spec(cfg, "box", 30001, environ={})
    command = spec.command
    assert command[:5] == ["podman", "run", "-d", "--name", "qwen-30001"]
    assert command[command.index("--device") :][:2] == ["--device", "nvidia.com/gpu=all"]
    assert command[command.index("-p") + 1] == "30001:30001"  # not the host network
    assert command[command.index("--ulimit") + 1] == "memlock=-1"
    image = command.index("localhost/sglang:0.5.23")  # no image_id: the tag
    assert command[image + 1 :][:3] == ["/opt/venv/bin/python3", "-m", "sglang.launch_server"]


def test_a_bare_profile_still_launches_its_argv(tmp_path):
    text = GOOD.replace(
        "    container:\n      engine: podman", "    xcontainer:\n      engine: podman"
    )
    text = text.replace("xcontainer:\n      engine: podman\n      image: localhost/sglang:0.5.23\n"
                        "      options: {gpus: all, name: \"qwen-{port}\", network: bridge, extra:"
                        " [--ulimit, memlock=-1]}\n", "")  # fmt: skip
    spec = launch_spec(config.load(write(tmp_path, text)), "box", 30001, environ={})
    assert spec.container is None and spec.command == list(spec.argv)
    assert spec.command[:3] == ["/opt/venv/bin/python3", "-m", "sglang.launch_server"]


BROKEN = {
    "engine": ("engine: docker", "engine: dockr", "profiles.boxed.container.engine",
               "'docker' or 'podman'"),
    "shm": ("shm-size: 32g", "shm-size: lots", "profiles.boxed.container.options.shm-size",
            "expected a size such as 32g"),
    "misspelt option": ("ipc: host", "ipcc: host", "profiles.boxed.container.options.ipcc",
                        "did you mean 'ipc'?"),
    "restart no": ("restart: unless-stopped", "restart: no",
                   "profiles.boxed.container.options.restart", 'write "no"'),
    "volume with ~": ("volumes: [/root/.cache", "volumes: [~/.cache",
                      "profiles.boxed.container.options.volumes[0]", "write ~ out"),
    "image id": ("image_id: sha256:0123", "image_id: latest0123",
                 "profiles.boxed.container.image_id", "should match pattern"),
    "network none": ("network: bridge", "network: none",
                     "profiles.podded.container.options.network", "expected host"),
    "gpus": ("gpus: all", "gpus: some", "profiles.podded.container.options.gpus",
             "expected 'all' or a list"),
    "two gpu answers": ("gpus: all", "gpus: [0]", "hosts.box.servers[1].gpus", None),
}  # fmt: skip


@pytest.mark.parametrize("name", sorted(BROKEN))
def test_a_broken_container_field_names_file_line_and_field(name, tmp_path):
    old, new, field, words = BROKEN[name]
    text = GOOD.replace(old, new, 1)
    if name == "two gpu answers":  # the server pins GPUs its profile's options disagree with
        text = text.replace("{port: 30001, profile: podded}", "{port: 30001, profile: podded,"
                            " gpus: [1]}")  # fmt: skip
        words = "disagrees with this server's gpus [1]"
    path = write(tmp_path, text)
    with pytest.raises(ConfigError) as caught:
        config.load(path)
    problems = caught.value.problems
    line = next(
        number
        for number, written in enumerate(text.splitlines(), 1)
        if (new if name != "two gpu answers" else "gpus: [1]") in written
    )
    assert any(
        problem.startswith(f"{path}:{line}: {field}: ") and words in problem for problem in problems
    ), problems


def test_a_container_server_cannot_have_a_systemd_launcher(tmp_path):
    text = GOOD.replace("{port: 30001, profile: podded}", "{port: 30001, profile: podded,"
                        " launcher: systemd-run}")  # fmt: skip
    with pytest.raises(ConfigError) as caught:
        config.load(write(tmp_path, text))
    assert any(
        "hosts.box.servers[1].launcher" in problem and "its engine starts" in problem
        for problem in caught.value.problems
    )
