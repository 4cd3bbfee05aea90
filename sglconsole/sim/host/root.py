"""Build a simulated GPU host's root folder.

    ROOT/env/        a venv: bin/python3 (a real interpreter), and in its
                     site-packages the `sglang` shim (visible only to it)
    ROOT/bin/        nvidia-smi (the replay), dcgm-exporter, dmesg, pct (for LXC-style hosts)
    ROOT/models/     model folders with a config.json each
    ROOT/logs/       where servers write
    ROOT/sim/        host.json (GPUs, nvidia-smi and SGLang behaviour), runtime state
    ROOT/ssh/        the host's SSH host key and authorized_keys

So on a simulated host a server runs as
``ROOT/env/bin/python3 -m sglang.launch_server --model-path ROOT/models/X ...``
exactly like a real one.
"""

from __future__ import annotations

import json
import os
import sys
import sysconfig
from pathlib import Path

from sglconsole.sim import envtable, gpustate
from sglconsole.sim.host.wheels import write_index
from sglconsole.sim.versiontable import available_versions

PROJECT_ROOT = Path(__file__).resolve().parents[3]

MODELS = {
    # name: (architecture, weights GB, KV KB/token, context, hybrid kind)
    "Qwen3.6-27B": ("Qwen3_5ForConditionalGeneration", 27.0, 96, 262144, "ssm"),
    "Qwen3-8B": ("Qwen3ForCausalLM", 16.4, 144, 40960, None),
    "Qwen3-Next-80B-A3B": ("Qwen3NextForCausalLM", 80.0, 48, 262144, "ssm"),
    "Llama-3.1-8B-Instruct": ("LlamaForCausalLM", 16.1, 128, 131072, None),
}
VOCAB = {  # config.json's vocab_size (a multimodal model keeps it in text_config)
    "Qwen3.6-27B": 248320,
    "Qwen3-8B": 151936,
    "Qwen3-Next-80B-A3B": 151936,
    "Llama-3.1-8B-Instruct": 128256,
}

SHIM_FILES = {
    "__init__.py": (
        '"""Simulated SGLang (sglconsole\'s simulator)."""\n\n'
        "from sglang._sim import VERSION as __version__\n"
    ),
    "launch_server.py": (
        '"""python -m sglang.launch_server, simulated."""\n\n'
        'if __name__ == "__main__":\n'
        "    import sys\n\n"
        "    from sglconsole.sim.server.main import main\n"
        "    from sglang._sim import ROOT, VERSION\n\n"
        "    raise SystemExit(main(sys.argv[1:], version=VERSION, root=ROOT))\n"
    ),
    "benchmark/__init__.py": "",
    # 0.5.23 moved bench_serving here; the simulated one drives this host's simulated server
    "benchmark/serving.py": (
        'if __name__ == "__main__":\n'
        "    from sglconsole.sim.bench.serving import main\n\n"
        "    raise SystemExit(main())\n"
    ),
    "srt/__init__.py": "",
    "srt/server_args.py": (
        '"""The simulated ServerArgs: the same flags as the real version\'s parser."""\n\n'
        "import argparse\n\n"
        "from sglang._sim import VERSION\n\n\n"
        "class ServerArgs:\n"
        "    @staticmethod\n"
        "    def add_cli_args(parser: argparse.ArgumentParser) -> None:\n"
        "        from sglconsole.sim.flagtable import add_cli_args\n\n"
        "        add_cli_args(parser, VERSION)\n\n\n"
        "def prepare_server_args(argv):\n"
        "    parser = argparse.ArgumentParser()\n"
        "    ServerArgs.add_cli_args(parser)\n"
        "    return parser.parse_args(argv)\n"
    ),
}


def create_host(
    root: str | os.PathLike,
    *,
    gpu_model: str = "H200",
    gpu_count: int = 1,
    sglang_version: str = "0.5.23",
    pid_offset: int = 0,
    models: tuple[str, ...] = ("Qwen3-8B",),
    sglang: dict | None = None,
) -> Path:
    root = Path(root).resolve()
    for sub in ("bin", "logs", "models", "sim", "ssh"):
        (root / sub).mkdir(parents=True, exist_ok=True)
    _make_venv(root / "env")
    _install_shim(root, sglang_version)
    _write_bin(root)
    _write_serve_cli(root, sglang_version)
    write_index(root, {release: shim_files(root, release) for release in available_versions()},
                sim_paths())  # fmt: skip
    for name in models:
        add_model(root, name)
    gpustate.write_host(
        root,
        gpu_model=gpu_model,
        gpu_count=gpu_count,
        uuid_seed=root.name,
        pid_offset=pid_offset,
        sglang={"version": sglang_version, **(sglang or {})},
    )
    return root


def python_of(root: str | os.PathLike) -> str:
    return str(Path(root) / "env" / "bin" / "python3")


def path_env(root: str | os.PathLike) -> str:
    return f"{Path(root) / 'bin'}:/usr/local/bin:/usr/bin:/bin:/usr/local/sbin:/usr/sbin:/sbin"


def add_model(root: str | os.PathLike, name: str) -> Path:
    arch, weights, kv_kb, context, hybrid = MODELS[name]
    folder = Path(root) / "models" / name
    folder.mkdir(parents=True, exist_ok=True)
    config = {
        "architectures": [arch],
        "max_position_embeddings": context,
        "torch_dtype": "bfloat16",
        "sim_weights_gb": weights,
        "sim_kv_kb_per_token": kv_kb,
        "sim_hybrid": hybrid,
    }
    if arch.endswith("ForConditionalGeneration"):
        config["text_config"] = {"vocab_size": VOCAB[name]}
    else:
        config["vocab_size"] = VOCAB[name]
    (folder / "config.json").write_text(json.dumps(config, indent=2))
    return folder


def _make_venv(env: Path) -> None:
    """A venv by hand (no subprocess): a symlinked interpreter plus pyvenv.cfg."""
    base = Path(getattr(sys, "_base_executable", sys.executable)).resolve()
    (env / "bin").mkdir(parents=True, exist_ok=True)
    version = f"{sys.version_info.major}.{sys.version_info.minor}"
    (env / "pyvenv.cfg").write_text(
        f"home = {base.parent}\ninclude-system-site-packages = false\n"
        f"version = {sys.version.split()[0]}\n"
    )
    for name in ("python3", "python", f"python{version}"):
        link = env / "bin" / name
        if not link.exists():
            link.symlink_to(base)
    site = _site_packages(env)
    site.mkdir(parents=True, exist_ok=True)
    # the simulator's own code (console.sim) and its one C extension (setproctitle)
    (site / "_sglsim.pth").write_text(sim_paths())


def _site_packages(env: Path) -> Path:
    version = f"python{sys.version_info.major}.{sys.version_info.minor}"
    return env / "lib" / version / "site-packages"


def _our_site_packages() -> list[str]:
    found = [sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"]]
    found += [path for path in sys.path if path.endswith("site-packages")]
    return [path for path in dict.fromkeys(found) if os.path.isdir(path)]


WEIGHT_CACHE_SHIM = {
    "srt/weight_cache/__init__.py": "",
    "srt/weight_cache/daemon.py": (
        '"""python -m sglang.srt.weight_cache.daemon, simulated."""\n\n'
        'if __name__ == "__main__":\n'
        "    import sys\n\n"
        "    from sglconsole.sim.server.weight_cache import main\n"
        "    from sglang._sim import ROOT, VERSION\n\n"
        "    raise SystemExit(main(sys.argv[1:], version=VERSION, root=ROOT))\n"
    ),
}


def shim_files(root: Path, version: str) -> dict[str, str]:
    """The simulated `sglang` package of `version` on this host: path under the package -> text
    (what its env has installed, and what its wheel index serves: wheels.py)."""
    from sglconsole.sim.versiontable import runtime_mode

    files = {
        **SHIM_FILES,
        **(WEIGHT_CACHE_SHIM if runtime_mode(version, "weight_cache_daemon") else {}),
        "_sim.py": f"ROOT = {str(root)!r}\nVERSION = {version!r}\n",
        # as SGLang writes it: a literal, readable without importing the package
        "version.py": f'__version__ = "{version}"\n',
    }
    # the release's environment registry, for a reader that parses the source (as on a real host)
    environ = envtable.environ_source(version)
    if environ is not None:
        files["srt/environ.py"] = environ
        files["srt/_env_reads.py"] = envtable.elsewhere_source(version)
    return files


def sim_paths() -> str:
    """The `.pth` that lets a simulated host's python import the simulator (and setproctitle)."""
    paths = [str(PROJECT_ROOT), *_our_site_packages()]
    return "\n".join(dict.fromkeys(paths)) + "\n"


def _install_shim(root: Path, version: str) -> None:
    package = _site_packages(root / "env") / "sglang"
    for relative, text in shim_files(root, version).items():
        path = package / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)


def _write_bin(root: Path) -> None:
    python = python_of(root)
    nvidia_smi = root / "bin" / "nvidia-smi"
    # -S: skip site (startup cost matters: the console runs it every few seconds)
    nvidia_smi.write_text(
        f"#!{python} -S\n"
        "import sys\n"
        f"sys.path.insert(0, {str(PROJECT_ROOT)!r})\n"
        "from sglconsole.sim.nvidia_smi.cli import program\n"
        f"raise SystemExit(program(root={str(root)!r}))\n"
    )
    dcgm = root / "bin" / "dcgm-exporter"  # started only where a test wants one
    dcgm.write_text(
        f"#!{python} -S\n"
        "import sys\n"
        f"sys.path.insert(0, {str(PROJECT_ROOT)!r})\n"
        "from sglconsole.sim.nvidia_smi.dcgm import program\n"
        f"raise SystemExit(program(root={str(root)!r}))\n"
    )
    dmesg = root / "bin" / "dmesg"  # the host's kernel log (sim/host/dmesg.py)
    dmesg.write_text(
        f"#!{python} -S\n"
        "import sys\n"
        f"sys.path.insert(0, {str(PROJECT_ROOT)!r})\n"
        "from sglconsole.sim.host.dmesg import program\n"
        f"raise SystemExit(program(root={str(root)!r}))\n"
    )
    pct = root / "bin" / "pct"
    pct.write_text(
        "#!/bin/sh\n"
        "# Simulated Proxmox `pct exec VMID -- CMD...`: this simulated host is the container.\n"
        '[ "$1" = exec ] || { echo "pct: only \'exec\' is simulated" >&2; exit 2; }\n'
        "shift 2\n"
        '[ "$1" = "--" ] && shift\n'
        'exec "$@"\n'
    )
    for script in (nvidia_smi, dcgm, dmesg, pct):
        script.chmod(0o755)


_SERVE_USAGE = "usage: sglang serve [-h] --model-path MODEL_PATH ...  (only serve is simulated)"


def _write_serve_cli(root: Path, version: str) -> None:
    """SGLang versions with sglang/cli/serve.py install a `sglang` console script; `sglang
    serve ...` runs the server, so /proc shows `<env>/bin/python3 <env>/bin/sglang serve
    --model-path ...` (what the monitor must find)."""
    from sglconsole.sim.versiontable import load

    if not load(version)["serve_cli"]:
        return
    script = root / "env" / "bin" / "sglang"
    script.write_text(
        f"#!{python_of(root)}\n"
        '"""sglang\'s console script, simulated: only `serve` is."""\n'
        "import sys\n\n"
        "from sglang._sim import ROOT, VERSION\n\n"
        'if len(sys.argv) < 2 or sys.argv[1] != "serve":\n'
        f"    print({_SERVE_USAGE!r}, file=sys.stderr)\n"
        "    raise SystemExit(2)\n"
        "from sglconsole.sim.server.main import main\n\n"
        'raise SystemExit(main(sys.argv[2:], version=VERSION, root=ROOT, entry="serve"))\n'
    )
    script.chmod(0o755)
