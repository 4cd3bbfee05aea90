"""`sglang serve MODEL` and `--config FILE` as SGLang's own code turns them into the parser's argv:
the console's mirror (core/launch_form.py, core/config_file.py) and the simulator's
(sim/server/launch_args.py) against SGLang's real ConfigArgumentMerger, read from the release
wheels."""

from __future__ import annotations

import glob
import importlib.util
import zipfile
from pathlib import Path

import pytest

from sglconsole.config.flag_tables import load_table
from sglconsole.core.config_file import ConfigFileError, expand, kinds_from_table
from sglconsole.core.launch_form import parser_args
from sglconsole.sim import flagtable
from sglconsole.sim.server.launch_args import LaunchRefused, merge_config, serve_argv

WHEELS = Path("/work/wheels")

YAML = """
tp-size: 2
enable-metrics: true
disable-radix-cache: false
mem-fraction-static: 0.8
skip-server-warmup: true
served-model-name: null
json-model-override-args: {rope_scaling: {type: yarn}}
log-requests-target: [stdout, /tmp/x]
bucket-time-to-first-token: []
model_path: /m
"""


def _real_merger(version: str, tmp_path: Path):
    wheel = next(iter(glob.glob(str(WHEELS / f"sglang-{version}-*.whl"))), None)
    if wheel is None:
        pytest.skip(f"no sglang {version} wheel in {WHEELS}")
    with zipfile.ZipFile(wheel) as archive:
        name = next(n for n in archive.namelist() if n.endswith("server_args_config_parser.py"))
        source = tmp_path / f"merger_{version.replace('.', '_')}.py"
        source.write_bytes(archive.read(name))
    spec = importlib.util.spec_from_file_location(source.stem, source)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.ConfigArgumentMerger


@pytest.mark.parametrize("version", ["0.5.12", "0.5.23"])
@pytest.mark.parametrize(
    "text",
    [YAML, "", "enable-dp-attention: true\n", "tp-size: 1\nenable-metrics: false\n"],
)
def test_the_console_and_the_simulator_merge_a_config_file_as_sglang_does(version, text, tmp_path):
    merger = _real_merger(version, tmp_path)
    parser = flagtable.build_parser(version)
    path = tmp_path / "x.yaml"
    path.write_text(text)
    argv = ["--model-path", "m", "--config", str(path), "--tp-size", "4"]
    try:
        real: object = merger(parser).merge_config_with_args(list(argv))
    except ValueError as exc:
        real = ("refused", str(exc))
    try:
        console: object = expand(
            argv, text, kinds_from_table(load_table(version)["actions"], version)
        )
    except ConfigFileError as exc:
        console = ("refused", str(exc))
    try:
        sim: object = merge_config(list(argv), parser, version)
    except LaunchRefused as exc:
        sim = ("refused", str(exc).removeprefix("ValueError: "))

    # the parser here is the simulator's, whose own classes stand in for SGLang's custom ones:
    # in a refusal only the class named differs (the console names SGLang's, from the table)
    def cut(answer: object) -> str:
        return str(answer).split(" with action")[0]

    assert console == real or cut(console) == cut(real)
    assert sim == real or cut(sim) == cut(real)


def test_sglang_serve_takes_the_model_positionally_only_from_0_5_16():
    argv = (
        "/env/bin/python3",
        "/env/bin/sglang",
        "serve",
        "/m",
        "--model-type",
        "llm",
        "--tp",
        "2",
    )
    assert parser_args(argv, "0.5.23").args == ("--model-path", "/m", "--tp", "2")
    assert parser_args(argv, "0.5.16").args == ("--model-path", "/m", "--tp", "2")
    assert parser_args(argv, None).args[:2] == ("--model-path", "/m")  # running: its own proof
    old = parser_args(argv, "0.5.15")
    assert old.problem and "0.5.15" in old.problem and "--model-path /m" in old.problem
    # launch_server never took a positional: the parser names it
    module = ("/env/bin/python3", "-m", "sglang.launch_server", "/m")
    assert parser_args(module, "0.5.23").args == ("/m",) and parser_args(module).problem is None
    assert serve_argv(["/m", "--tp", "2"], "0.5.17") == ["--model-path", "/m", "--tp", "2"]
    with pytest.raises(LaunchRefused, match="--model-path is required"):
        serve_argv(["/m"], "0.5.12")


def test_the_first_release_with_the_positional_is_0_5_16():
    if not WHEELS.is_dir():
        pytest.skip("no SGLang wheels here")
    has = {}
    for wheel in WHEELS.glob("sglang-0.5.*-*.whl"):
        with zipfile.ZipFile(wheel) as archive:
            text = archive.read("sglang/cli/serve.py").decode()
        has[tuple(int(x) for x in wheel.name.split("-")[1].split("."))] = (
            "_normalize_positional_model_path" in text
        )
    assert min(v for v, yes in has.items() if yes) == (0, 5, 16)
    assert all(yes == (v >= (0, 5, 16)) for v, yes in has.items())


def test_argdiff_reads_a_pasted_sglang_serve_model_line():
    from sglconsole.commands.drift import split_command

    args, env = split_command("HF_HUB_OFFLINE=1 sglang serve /m --model-type llm --tp 2")
    assert (args, env) == (["--model-path", "/m", "--tp", "2"], {"HF_HUB_OFFLINE": "1"})
    assert split_command("sglang serve --model-path /m")[0] == ["--model-path", "/m"]
