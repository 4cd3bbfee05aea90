"""hosts.yaml: the example validates; each broken variant names file, line and field."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from sglconsole import config
from sglconsole.config.routers import routes_of
from sglconsole.errors import ConfigError

REPO = Path(__file__).resolve().parents[1]
EXAMPLE = (REPO / "hosts.yaml").read_text()


def line_of(text: str, needle: str) -> int:
    for number, line in enumerate(text.splitlines(), 1):
        if needle in line:
            return number
    raise AssertionError(f"{needle!r} not in text")


def test_example_is_valid_and_uses_every_option():
    cfg = config.load(REPO / "hosts.yaml")
    ct = cfg.hosts["ct129"]
    assert ct.exec_prefix == ["pct", "exec", "129", "--"]
    assert ct.user == "root"  # from defaults
    assert cfg.hosts["gpu4"].user == "ubuntu"  # a host's own key wins
    assert [s.port for s in cfg.hosts["gpu4"].servers] == [30000, 30001, 30002, 30003]
    assert [s.gpus for s in cfg.hosts["gpu4"].servers] == [[0], [1], [2], [3]]
    profile = cfg.profiles["qwen27b-tp2-mtp"]
    assert profile.env["NCCL_P2P_DISABLE"] == "0" and "SGLANG_ENABLE_SPEC_V2" not in profile.env
    assert profile.args[profile.args.index("--speculative-num-steps") + 1] == "3"
    assert cfg.profiles["qwen8b-tp1"].args[:2] == [
        "--model-path",
        "/models/Qwen3-8B",
    ]  # shell-split string
    assert ct.servers[0].systemd_unit == "sglang-30000.service"
    for host in cfg.hosts.values():
        assert host.address.endswith(".example")
    assert [r.worker_url for r in routes_of(cfg, "gpu4", 30000)] == ["http://127.0.0.1:30000"]
    assert [r.worker_url for r in routes_of(cfg, "gpu4", 30003)] == ["http://10.0.0.4:30003"]
    assert cfg.routers["front"].drain_timeout == 90 and routes_of(cfg, "ct129", 30000) == []
    assert cfg.profiles["qwen27b-tp2-mtp"].canary.interval == 600  # the canary: per profile
    assert cfg.hosts["gpu4"].servers[3].canary.interval == 0  # and off for one server
    lab = cfg.routers["lab"]
    assert (lab.kind, lab.admin_token, lab.metrics_port) == ("smg", "${SMG_ADMIN_TOKEN}", 39101)
    assert cfg.routers["front"].kind is None  # detected from its answers
    boxed = cfg.profiles["qwen8b-docker"].container
    assert (boxed.engine, boxed.options.shm_size, boxed.options.restart) == ("docker", "32g", "no")


def variant(old: str, new: str) -> str:
    assert old in EXAMPLE, old
    return EXAMPLE.replace(old, new, 1)


BROKEN = {
    "bad port type": (
        variant("- port: 30000\n        profile: qwen27b", "- port: abc\n        profile: qwen27b"),
        "- port: abc",
        "hosts.ct129.servers[0].port: expected an integer 1-65535, got 'abc'",
    ),
    "port out of range": (
        variant("{port: 30001,", "{port: 70001,"),
        "port: 70001",
        "hosts.gpu4.servers[1].port: expected an integer 1-65535, got 70001",
    ),
    "unknown host key": (
        variant("    address: gpu4.lab.example", "    adress: gpu4.lab.example"),
        "adress: gpu4",
        "hosts.gpu4.adress: unknown key (did you mean 'address'?",
    ),
    "unknown server key": (
        variant("        gpus: [0, 1]", "        gpu: [0, 1]"),
        "gpu: [0, 1]",
        "hosts.ct129.servers[0].gpu: unknown key (did you mean 'gpus'?",
    ),
    "unknown profile key": (
        variant("    requires_sglang:", "    require_sglang:"),
        "require_sglang",
        "profiles.qwen27b-tp2-mtp.require_sglang: unknown key (did you mean 'requires_sglang'?",
    ),
    "unknown profile name": (
        variant("{port: 30002, profile: qwen8b-tp1", "{port: 30002, profile: qwen8b-tp2"),
        "port: 30002",
        "hosts.gpu4.servers[2].profile: unknown profile 'qwen8b-tp2' (did you mean 'qwen8b-tp1'?",
    ),
    "duplicate port on a host": (
        variant("{port: 30003,", "{port: 30001,"),
        "log: /var/log/sglang/30003.log",
        "hosts.gpu4.servers[3].port: port 30001 is already used by servers[1] on this host",
    ),
    "bad yaml syntax": (
        variant("    jump: bastion\n    identity_file", "    jump: [bastion\n    identity_file"),
        "identity_file: ~/.ssh/gpu4",
        "YAML syntax error",
    ),
    "missing required address": (
        variant("    address: bastion.lab.example\n", ""),
        "  bastion:",
        "hosts.bastion.address: required field is missing",
    ),
    "bad launcher": (
        variant("launcher: nohup}", "launcher: screen}"),
        "launcher: screen",
        "hosts.gpu4.servers[2].launcher: expected 'nohup', 'systemd-run' or 'systemd:UNIT',"
        " got 'screen'",
    ),
    "bad version specifier": (
        variant('requires_sglang: ">=0.5.10"', 'requires_sglang: "at least 0.5"'),
        "requires_sglang",
        "profiles.qwen27b-tp2-mtp.requires_sglang: expected a version specifier such as"
        " '>=0.5.10', got 'at least 0.5'",
    ),
    "boolean env value": (
        variant('NCCL_P2P_DISABLE: "0"', "NCCL_P2P_DISABLE: no"),
        "NCCL_P2P_DISABLE",
        "profiles.qwen27b-tp2-mtp.env.NCCL_P2P_DISABLE: expected a string, got False",
    ),
    "unknown defaults key": (
        variant("  keepalive_count_max: 3", "  keepalive_max: 3"),
        "keepalive_max",
        "defaults.keepalive_max: unknown key (did you mean 'keepalive_count_max'?",
    ),
    "jump to nowhere": (
        variant("    jump: bastion\n    identity_file", "    jump: nosuchhost\n    identity_file"),
        "jump: nosuchhost",
        "hosts.gpu4.jump: expected another host's name",
    ),
    "duplicate key": (
        variant("    user: ubuntu\n", "    user: ubuntu\n    user: admin\n"),
        "user: admin",
        "hosts.gpu4.user: duplicate key (first defined on line",
    ),
    "profile port disagrees": (
        variant("--tp-size 1\n", "--tp-size 1 --port 31000\n"),
        "{port: 30000, profile: qwen8b-tp1",
        "hosts.gpu4.servers[0].port: profile 'qwen8b-tp1' sets --port 31000,"
        " which disagrees with this server's port 30000",
    ),
    "negative gpu index": (
        variant("gpus: [3]", "gpus: [-3]"),
        "gpus: [-3]",
        "hosts.gpu4.servers[3].gpus[0]: expected a value >= 0, got -3",
    ),
    "router on an unknown host": (
        variant("host: gpu4             #", "host: gpu5             #"),
        "host: gpu5",
        "routers.front.host: unknown host 'gpu5' (hosts: ",
    ),
    "router fronting a server that is not configured": (
        variant('"gpu4:30002"]', '"gpu4:30009"]'),
        '"gpu4:30009"]',
        "routers.front.servers[2]: gpu4 has no server on port 30009 (configured: 30000, 30001",
    ),
    "router server not HOST:PORT": (
        variant('servers: ["gpu4:30003"]', 'servers: ["gpu4"]'),
        'servers: ["gpu4"]',
        "routers.lab.servers[0]: expected HOST:PORT (e.g. h200x4:30000), got 'gpu4'",
    ),
    "router with both host and url": (
        variant("    port: 39000\n", "    port: 39000\n    url: http://127.0.0.1:1\n"),
        "  front:",
        "routers.front: give either host: (an SSH host) and port:, or url:, not both or neither",
    ),
    "router key misspelt": (
        variant("drain_timeout: 90", "drain_timout: 90"),
        "drain_timout: 90",
        "routers.front.drain_timout: unknown key (did you mean 'drain_timeout'?",
    ),
    "canary interval below zero": (
        variant("canary: {interval: 600", "canary: {interval: -5"),
        "canary: {interval: -5",
        "profiles.qwen27b-tp2-mtp.canary.interval: expected a value >= 0.0, got -5",
    ),
    "canary key misspelt": (
        variant("canary: {interval: 0}", "canary: {intervall: 0}"),
        "canary: {intervall: 0}",
        "hosts.gpu4.servers[3].canary.intervall: unknown key (did you mean 'interval'?",
    ),
    "router admin token written into hosts.yaml": (
        variant("admin_token: ${SMG_ADMIN_TOKEN}", "admin_token: s3cret-t0ken"),
        "admin_token: s3cret",
        "routers.lab.admin_token: give the token as a reference to your environment, e.g."
        " ${SMG_ADMIN_TOKEN}, never the secret itself",
    ),
    "router of an unknown generation": (
        variant("kind: smg", "kind: sgl-router"),
        "kind: sgl-router",
        "routers.lab.kind: ",
    ),
    "router worker url for a server it does not front": (
        variant('{"gpu4:30003": "http', '{"gpu4:30001": "http'),
        "worker_urls:",
        'routers.lab.worker_urls["gpu4:30001"]: gpu4:30001 is not one of this router',
    ),
}


@pytest.mark.parametrize("name", list(BROKEN))
def test_broken_variant_names_file_line_and_field(name, tmp_path):
    text, needle, expected = BROKEN[name]
    path = tmp_path / "hosts.yaml"
    path.write_text(text)
    with pytest.raises(ConfigError) as info:
        config.load(path)
    message = str(info.value)
    assert f"{path}:{line_of(text, needle)}: " in message, message
    assert expected in message, message


def test_every_problem_is_reported_at_once(tmp_path):
    text = variant("{port: 30001,", "{port: 70001,").replace("    adress", "    address")
    text = text.replace("gpus: [0, 1]", "gpu: [0, 1]", 1)
    path = tmp_path / "hosts.yaml"
    path.write_text(text)
    with pytest.raises(ConfigError) as info:
        config.load(path)
    assert len(info.value.problems) == 2


def test_missing_file_is_named(tmp_path):
    with pytest.raises(ConfigError, match=r"nope\.yaml: no such file"):
        config.load(tmp_path / "nope.yaml")


def test_empty_file(tmp_path):
    (tmp_path / "h.yaml").write_text("# nothing\n")
    with pytest.raises(ConfigError, match=r"h\.yaml:1: the file is empty"):
        config.load(tmp_path / "h.yaml")


def test_discovery_order(tmp_path, monkeypatch):
    (tmp_path / "hosts.yaml").write_text("hosts: {}\n")
    (tmp_path / "env.yaml").write_text("hosts: {}\n")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.delenv(config.CONFIG_ENV, raising=False)
    assert config.discover() == Path("hosts.yaml")
    monkeypatch.setenv(config.CONFIG_ENV, str(tmp_path / "env.yaml"))
    assert config.discover() == tmp_path / "env.yaml"
    assert config.discover("other.yaml") == Path("other.yaml")
    monkeypatch.delenv(config.CONFIG_ENV)
    (tmp_path / "hosts.yaml").unlink()
    user = tmp_path / "home" / ".config" / "sglconsole" / "hosts.yaml"
    user.parent.mkdir(parents=True)
    user.write_text("hosts: {}\n")
    assert config.discover() == user
    user.unlink()
    with pytest.raises(ConfigError, match="no hosts.yaml found"):
        config.discover()


def test_xdg_config_home_is_searched_last_and_a_miss_names_every_path(tmp_path):
    home, xdg, work = tmp_path / "home", tmp_path / "xdg", tmp_path / "work"
    work.mkdir()
    home.mkdir()
    env = {**os.environ, "HOME": str(home), "XDG_CONFIG_HOME": str(xdg), "COLUMNS": "2000"}
    env.pop(config.CONFIG_ENV, None)

    def hosts() -> subprocess.CompletedProcess:
        return subprocess.run(
            [sys.executable, "-m", "sglconsole", "hosts"],
            cwd=work,
            env=env,
            capture_output=True,
            text=True,
            timeout=60,
        )

    missing = hosts()
    dot_config = home / ".config" / "sglconsole" / "hosts.yaml"
    in_xdg = xdg / "sglconsole" / "hosts.yaml"
    assert missing.returncode == 2 and "no hosts.yaml found" in missing.stderr
    assert f"looked in hosts.yaml, {dot_config}, {in_xdg})" in missing.stderr
    in_xdg.parent.mkdir(parents=True)
    in_xdg.write_text("hosts:\n  from-xdg:\n    address: 127.0.0.1\n")
    found = hosts()
    assert found.returncode == 0 and "from-xdg" in found.stdout, found.stderr
    dot_config.parent.mkdir(parents=True)  # the ones searched before it still win
    dot_config.write_text("hosts:\n  from-home:\n    address: 127.0.0.1\n")
    assert "from-home" in hosts().stdout


def run_cli(*args: str, cwd: Path = REPO, home: Path | None = None) -> subprocess.CompletedProcess:
    env = {**os.environ, "COLUMNS": "200", **({"HOME": str(home)} if home else {})}
    return subprocess.run(
        [sys.executable, "-m", "sglconsole", *args],
        capture_output=True,
        text=True,
        cwd=cwd,
        env=env,
    )


def test_cli_check_ok_and_broken(tmp_path):
    # the example names files in ~/.ssh: an operator's home that has them
    home = tmp_path / "home"
    (home / ".ssh").mkdir(parents=True)
    for name in ("id_ed25519", "gpu4_ed25519", "known_hosts"):
        (home / ".ssh" / name).write_text("")
    ok = run_cli("check", "-c", "hosts.yaml", home=home)
    assert ok.returncode == 0 and "ok (5 hosts, 6 servers, 3 profiles)" in ok.stdout, ok.stderr
    (home / ".ssh" / "gpu4_ed25519").unlink()
    gone = run_cli("check", "-c", "hosts.yaml", home=home)
    assert gone.returncode == 2 and "hosts.gpu4.identity_file: identity file" in gone.stderr
    text, needle, expected = BROKEN["bad port type"]
    (tmp_path / "hosts.yaml").write_text(text)
    bad = run_cli("check", "-c", str(tmp_path / "hosts.yaml"))
    assert bad.returncode == 2
    assert f"hosts.yaml:{line_of(text, needle)}: {expected}" in bad.stderr


def test_cli_version_help_and_hosts():
    assert run_cli("--version").stdout.startswith("sglconsole ")
    helptext = run_cli("--help").stdout
    for sub in ("check", "hosts", "run"):
        assert sub in helptext
    hosts = run_cli("hosts", "-c", "hosts.yaml")
    assert hosts.returncode == 0 and "ct129" in hosts.stdout and "qwen27b-tp2-mtp" in hosts.stdout


def test_launch_spec_is_what_a_server_launches_resolved_once():
    import dataclasses

    from sglconsole.config.launch_spec import launch_spec

    cfg = config.load(REPO / "hosts.yaml")
    server = cfg.hosts["gpu4"].servers[1]
    profile = cfg.profiles[server.profile].model_copy(
        update={
            "args": ["--model-path", "${MODELS}/m", "--api-key", "${KEY}"],
            "env": {"T": "${T}"},
        }
    )
    cfg.profiles[server.profile] = profile
    environ = {"MODELS": "/srv", "T": "x"}
    spec = launch_spec(cfg, "gpu4", server.port, environ=environ)
    environ["MODELS"] = "/changed"  # read once, when the spec was built
    assert spec.argv[:3] == (profile.python, "-m", "sglang.launch_server")
    # ${KEY} is unset: visible in the argument, named as unresolved; --port from the server entry
    assert spec.args == ["--model-path", "/srv/m", "--api-key", "${KEY}", "--port", "30001"]
    assert dict(spec.env) == {"T": "x", "CUDA_VISIBLE_DEVICES": "1"}
    assert spec.unresolved == ("KEY",)
    assert (spec.host, spec.port, spec.profile, spec.gpus) == ("gpu4", 30001, server.profile, (1,))
    assert spec.log == (server.log or "/tmp/sglang-30001.log")
    with pytest.raises(dataclasses.FrozenInstanceError):
        spec.argv = ()
    with pytest.raises(TypeError):
        spec.env["T"] = "y"


def test_cli_check_names_every_class_of_problem_at_once_and_misspelled_flags(tmp_path):
    """check used to stop at the schema's errors, and passed a flag no SGLang knows."""
    key = tmp_path / "id"
    key.write_text("")
    text = (
        "hosts:\n"
        "  gpu1:\n"
        "    address: 127.0.0.1\n"
        "    port: not-a-port\n"
        f"    identity_file: {key}\n"
        "    servers:\n"
        "      - {port: 30000, profile: p}\n"
        "profiles:\n"
        "  p:\n"
        "    args:\n"
        "      - --model-path\n"
        "      - /models/x\n"
        "      - --speculative-algoritm\n"
        "      - NEXTN\n"
        "      - --trust-remote\n"  # a prefix argparse takes: not a typo
        "      - --mem-fraction-static=0.8\n"
    )
    path = tmp_path / "hosts.yaml"
    path.write_text(text)
    both = run_cli("check", "-c", str(path))
    assert both.returncode == 2
    said = " ".join(both.stderr.split())  # as one line: the terminal's wrapping left out
    assert f"hosts.yaml:{line_of(text, 'port: not-a-port')}: hosts.gpu1.port" in said
    typo = line_of(text, "--speculative-algoritm")
    assert (
        f"hosts.yaml:{typo}: profiles.p.args[2]: --speculative-algoritm is not a flag of any "
        "shipped SGLang table" in said
    ), said
    assert "did you mean --speculative-algorithm?" in said
    assert "--trust-remote" not in said and "--mem-fraction" not in said
    path.write_text(text.replace("not-a-port", "22"))  # the schema passes: the flag still fails
    flags_only = run_cli("check", "-c", str(path))
    assert flags_only.returncode == 2 and "--speculative-algoritm" in flags_only.stderr
    path.write_text(text.replace("not-a-port", "22").replace("algoritm", "algorithm"))
    ok = run_cli("check", "-c", str(path))
    assert ok.returncode == 0, ok.stderr


def test_cli_check_reports_cross_checks_files_and_ambiguous_flags_together(tmp_path):
    """check used to stop at the cross-checks (no files, no more), skipped the files of valid
    hosts when another host broke the schema, and passed a prefix argparse refuses (0.5.23)."""
    text = (
        "hosts:\n"
        "  gpu1:\n"
        "    address: 127.0.0.1\n"
        f"    identity_file: {tmp_path / 'missing-key'}\n"
        "    servers:\n"
        "      - {port: 30000, profile: nope}\n"
        "      - {port: 30001, profile: p}\n"
        "profiles:\n"
        "  p:\n"
        "    args:\n"
        "      - --model-path\n"
        "      - /models/x\n"
        "      - --cuda-graph-max-bs\n"  # 0.5.17 has it whole; on 0.5.23 it is a prefix of two
        "      - '8'\n"
        "  old:\n"
        "    requires_sglang: <0.5.20\n"  # never runs on 0.5.23: the same flag is fine here
        "    args: [--model-path, /models/x, --cuda-graph-max-bs=8]\n"
    )
    path = tmp_path / "hosts.yaml"
    path.write_text(text)
    crossed = run_cli("check", "-c", str(path))
    assert crossed.returncode == 2
    said = " ".join(crossed.stderr.split())
    assert f"hosts.yaml:{line_of(text, 'profile: nope')}: hosts.gpu1.servers[0].profile:" in said
    assert (
        f"hosts.yaml:{line_of(text, 'identity_file')}: hosts.gpu1.identity_file: identity file"
        in said
    ), said
    assert (
        f"hosts.yaml:{line_of(text, '- --cuda-graph-max-bs')}: profiles.p.args[2]: "
        # 0.5.20 dropped the old spelling (each release judged by its own table)
        "--cuda-graph-max-bs is ambiguous on SGLang 0.5.20, 0.5.21, 0.5.22, 0.5.23" in said
    ), said
    assert "--cuda-graph-max-bs-decode or --cuda-graph-max-bs-prefill" in said
    assert "profiles.old" not in said
    # another host that breaks the schema: the valid host's missing file is still named
    broken = text.replace("profiles:\n", "  gpu2: {address: 127.0.0.2, port: abc}\nprofiles:\n")
    path.write_text(broken)
    schema = run_cli("check", "-c", str(path))
    said = " ".join(schema.stderr.split())
    assert schema.returncode == 2
    assert f"hosts.yaml:{line_of(broken, 'gpu2')}: hosts.gpu2.port" in said, said
    assert "hosts.gpu1.identity_file: identity file" in said, said
    assert "--cuda-graph-max-bs is ambiguous" in said


def test_flag_tables_say_where_a_prefix_is_ambiguous():
    from sglconsole.config.flag_check import ambiguous_candidates, tables_for

    assert ambiguous_candidates("--cuda-graph-max-bs", "0.5.23") == (
        "--cuda-graph-max-bs-decode",
        "--cuda-graph-max-bs-prefill",
    )
    assert ambiguous_candidates("--cuda-graph-max-bs", "0.5.17") == ()  # an exact match wins
    assert ambiguous_candidates("--speculative-algo", "0.5.23") == ()  # one candidate: taken
    # each release has its own table; the newest stands for what came after it
    assert tables_for(">=0.5.12,<0.5.17") == ["0.5.12", "0.5.13", "0.5.14", "0.5.15", "0.5.16"]
    assert tables_for(">=0.5.30")[-1] == "0.5.23"
    assert tables_for(None) == tables_for("not a specifier")


def test_cli_check_says_which_release_removed_a_pinned_profiles_flag_and_its_replacement(tmp_path):
    """A 0.5.12-style profile pinned to >=0.5.23 passed `check` (some shipped table knows each of
    its flags) and only failed on the host: the tables say the release and SGLang's successor."""
    text = (
        "hosts:\n"
        "  gpu1:\n"
        "    address: 127.0.0.1\n"
        "    servers:\n"
        "      - {port: 30001, profile: p}\n"
        "profiles:\n"
        "  p:\n"
        "    requires_sglang: '>=0.5.23'\n"
        "    args:\n"
        "      - --model-path\n"
        "      - /models/x\n"
        "      - --mamba-scheduler-strategy\n"
        "      - extra_buffer\n"
        "      - --attention-backend=cutlass_mla\n"
        "  old:\n"
        "    requires_sglang: <0.5.18\n"  # the same flags are fine where they still exist
        "    args: [--model-path, /models/x, --mamba-scheduler-strategy, extra_buffer]\n"
    )
    path = tmp_path / "hosts.yaml"
    path.write_text(text)
    done = run_cli("check", "-c", str(path))
    assert done.returncode == 2
    said = " ".join(done.stderr.split())
    assert (
        f"hosts.yaml:{line_of(text, '- --mamba-scheduler-strategy')}: profiles.p.args[2]: "
        "--mamba-scheduler-strategy is not a flag of SGLang 0.5.23: `--mamba-scheduler-strategy` "
        "was removed in SGLang 0.5." in said
    ), said
    assert "SGLang's replacement: `--mamba-radix-cache-strategy`" in said
    assert "value 'cutlass_mla' of `--attention-backend` was removed in SGLang 0.5." in said
    assert "profiles.old" not in said
