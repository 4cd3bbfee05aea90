"""The files a simulated fleet is reached through: SSH keys, sshd_config, boot.json, hosts.yaml."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import asyncssh
import yaml

from sglconsole.sim.fleet.host import SimHost
from sglconsole.sim.host.root import path_env

_SSHD_SETTINGS = (
    "UsePAM no\nStrictModes no\nPermitRootLogin yes\nPasswordAuthentication no\n"
    "KbdInteractiveAuthentication no\nAllowTcpForwarding yes\nMaxSessions 200\n"
    "LogLevel ERROR\nClientAliveInterval 5\n"
)


def client_key(workdir: Path) -> Path:
    """The console's SSH key (made once) and an empty known_hosts the hosts add to."""
    keys = workdir / "keys"
    keys.mkdir(exist_ok=True)
    path = keys / "id_ed25519"
    if not path.exists():
        key = asyncssh.generate_private_key("ssh-ed25519")
        key.write_private_key(str(path))
        path.chmod(0o600)
        (keys / "id_ed25519.pub").write_bytes(key.export_public_key())
    (keys / "known_hosts").touch()
    return path


def host_keys(workdir: Path, host: SimHost, client_key_path: Path) -> None:
    """The host's own key (known to the console) and its sshd_config trusting the console."""
    ssh = host.root / "ssh"
    key_path = ssh / "host_ed25519"
    if not key_path.exists():
        key = asyncssh.generate_private_key("ssh-ed25519")
        key.write_private_key(str(key_path))
        key_path.chmod(0o600)
    public = asyncssh.read_private_key(str(key_path)).export_public_key().decode().strip()
    with open(workdir / "keys" / "known_hosts", "a") as file:
        file.write(f"[{host.address}]:{host.port} {public}\n")
    shutil.copy(client_key_path.with_suffix(".pub"), ssh / "authorized_keys")
    (ssh / "sshd_config").write_text(
        f"HostKey {key_path}\nAuthorizedKeysFile {ssh / 'authorized_keys'}\n"
        + _SSHD_SETTINGS
        + f"SetEnv PATH={path_env(host.root)} HOME={host.root}\n{host.spec.sshd_config_extra}"
    )


def boot_file(host: SimHost, profiles: dict) -> None:
    """boot.json: the servers the host's init starts at boot."""
    boot = []
    for server in host.spec.servers:
        if server.running is None or server.container:  # a container's engine starts it
            continue
        profile = profiles[server.profile]
        env = {**server.running_env}
        if server.gpus:
            env["CUDA_VISIBLE_DEVICES"] = ",".join(map(str, server.gpus))
        start = (
            [host.python, str(Path(host.python).parent / "sglang"), "serve"]
            if server.entry == "serve"
            else [host.python, "-m", "sglang.launch_server"]
        )
        argv = [*start, *[fill(host, arg) for arg in server.running]]
        if "--port" not in server.running and server.port != 30000:
            argv += ["--port", str(server.port)]
        boot.append(
            {
                "argv": argv,
                "env": env,
                "log": str(host.root / "logs" / f"sglang-{server.port}.log"),
                "cwd": profile.get("workdir"),
            }
        )
    cache = host.spec.weight_cache
    if cache:  # started before the servers, as an operator would
        argv = [host.python, "-m", "sglang.srt.weight_cache.daemon"]
        argv += ["--model-path", host.seen(f"models/{cache['model']}")]
        argv += ["--tp-size", str(cache.get("tp", len(cache["gpus"])))]
        env = {"CUDA_VISIBLE_DEVICES": ",".join(map(str, cache["gpus"]))}
        log = str(host.root / "logs" / "weight-cache.log")
        boot.insert(0, {"argv": argv, "env": env, "log": log, "cwd": None})
    (host.root / "sim" / "boot.json").write_text(json.dumps(boot, indent=1))


def host_files(host: SimHost) -> None:
    """The files the host spec asks for, in place before its servers boot."""
    for relative, text in host.spec.files.items():
        path = host.root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(fill(host, text))


def unit_files(host: SimHost) -> None:
    """The host's systemd units, where its own `systemctl cat`-less lookups find them."""
    folder = (
        host.root / "etc" / "systemd" / "system"  # the upper layer of the host's own /etc
        if host.namespaced
        else host.root / ".config" / "systemd" / "user"  # HOME: never the machine's /etc
    )
    for name, text in host.spec.units.items():
        folder.mkdir(parents=True, exist_ok=True)
        (folder / name).write_text(fill(host, text.replace("{python}", host.python)))


def fill(host: SimHost, value: str) -> str:
    """`{models}` and `{logs}` in an argument, as paths the host sees."""
    return value.replace("{models}", host.seen("models")).replace("{logs}", host.seen("logs"))


def write_config(
    config_path: Path, workdir: Path, hosts: dict[str, SimHost], profiles: dict, extra: dict
) -> None:
    """The hosts.yaml that reaches the fleet."""
    keys = workdir / "keys"
    host_entries = {}
    used_profiles = {}
    for name, host in hosts.items():
        entry = {
            "address": host.address,
            "port": host.port,
            "user": "root",
            "identity_file": str(keys / "id_ed25519"),
            "known_hosts": str(keys / "known_hosts"),
            "python": host.python,
            "connect_timeout": 5,
            "keepalive_interval": 2,
            # /tmp is shared by every simulated host on this machine
            "lock_dir": host.seen("logs"),
        }
        if host.spec.exec_prefix:
            entry["exec_prefix"] = host.spec.exec_prefix
        entry["servers"] = [
            {
                "port": server.port,
                "profile": server.profile,
                "gpus": server.gpus,
                # a container's log is its engine's (`docker logs`), not a file
                **(
                    {} if server.container else {"log": host.seen(f"logs/sglang-{server.port}.log")}
                ),
                **({"launcher": server.launcher} if server.launcher != "nohup" else {}),
            }
            for server in host.spec.servers
        ]
        host_entries[name] = entry
        for server in host.spec.servers:
            used_profiles[server.profile] = _profile(host, profiles[server.profile])
    document = {"hosts": host_entries, "profiles": used_profiles, **extra}
    header = "# Written by sglconsole's simulator for its simulated fleet (loopback only).\n"
    config_path.write_text(header + yaml.safe_dump(document, sort_keys=False, width=100))


def _profile(host: SimHost, profile: dict) -> dict:
    out = dict(profile)
    out["python"] = host.python
    out["args"] = [fill(host, arg) for arg in profile["args"]]
    return out
