"""The operator's own SSH setup, over real OpenSSH: an ssh_config (Host alias, HostName, Port,
User, IdentityFile, ProxyJump, ConnectTimeout, ServerAlive*), a passphrase-protected key behind
a real ssh-agent, and files that are missing. Never the real ~/.ssh: every test writes its own
ssh_config and names it in hosts.yaml (`ssh_config:`)."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import time
from pathlib import Path

import pytest
import yaml

from sglconsole.config import Host
from sglconsole.remote.ssh.connection import SshHost
from sglconsole.remote.ssh.target import resolve
from tests.cli import cli as run_cli


def cli(*args: str, env: dict | None = None, timeout: float = 60) -> subprocess.CompletedProcess:
    """Without the caller's agent: keys come from the config under test."""
    base = {k: v for k, v in os.environ.items() if k != "SSH_AUTH_SOCK"}
    return run_cli(*args, env=env, timeout=timeout, columns=250, base_env=base)


def write_hosts(tmp_path: Path, hosts: dict) -> Path:
    path = tmp_path / "hosts.yaml"
    path.write_text(yaml.safe_dump({"hosts": hosts}, sort_keys=False))
    return path


def user() -> str:
    import pwd

    return pwd.getpwuid(os.getuid()).pw_name


def ssh_config(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "ssh_config"
    path.write_text(text)
    return path


def alias_block(alias: str, server, ssh_keys, **extra: str) -> str:
    lines = [
        f"Host {alias}",
        f"  HostName {server.address}",
        f"  Port {server.port}",
        f"  User {user()}",
        f"  IdentityFile {ssh_keys.client_key}",
        f"  UserKnownHostsFile {ssh_keys.known_hosts}",
        *(f"  {key} {value}" for key, value in extra.items()),
    ]
    return "\n".join(lines) + "\n"


def closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


# ------------------------------------------------------------------ ssh_config


def test_an_alias_only_host_is_reached_through_the_ssh_config(sshd, ssh_keys, tmp_path):
    config = ssh_config(tmp_path, alias_block("gpu-alias", sshd, ssh_keys))
    path = write_hosts(tmp_path, {"lab": {"address": "gpu-alias", "ssh_config": str(config)}})
    # not even the local user name is right: only the ssh_config's User can log in
    env = {"USER": "nobody-sglconsole", "LOGNAME": "nobody-sglconsole"}
    result = cli("run", "lab", "-c", str(path), "--", "sh", "-c", 'echo "$SSH_CONNECTION"', env=env)
    assert result.returncode == 0, result.stderr
    assert result.stdout.split()[2:4] == [sshd.address, str(sshd.port)]
    shown = cli("hosts", "-c", str(path), env=env).stdout
    assert f"{user()}@{sshd.address}:{sshd.port} (ssh_config gpu-alias)" in shown


def test_hosts_yaml_wins_over_the_ssh_config(sshd, ssh_keys, tmp_path):
    wrong = alias_block("gpu-alias", sshd, ssh_keys).replace(
        f"Port {sshd.port}", f"Port {closed_port()}"
    )
    config = ssh_config(tmp_path, wrong)
    entry = {"address": "gpu-alias", "port": sshd.port, "ssh_config": str(config)}
    path = write_hosts(tmp_path, {"lab": entry})
    result = cli("run", "lab", "-c", str(path), "--", "echo", "hi")
    assert result.returncode == 0 and result.stdout.strip() == "hi", result.stderr
    assert f"{sshd.address}:{sshd.port}" in cli("hosts", "-c", str(path)).stdout


def test_the_ssh_configs_connect_timeout_and_keepalives_apply(ssh_keys, tmp_path):
    hang = socket.socket()
    hang.bind(("127.0.0.1", 0))
    hang.listen(5)  # accepts the TCP handshake, never speaks SSH
    text = (
        f"Host slow\n  HostName 127.0.0.1\n  Port {hang.getsockname()[1]}\n"
        "  ConnectTimeout 1\n  ServerAliveInterval 7\n  ServerAliveCountMax 4\n"
    )
    config = ssh_config(tmp_path, text)
    host = Host(address="slow", ssh_config=str(config), known_hosts=str(ssh_keys.known_hosts))
    target = resolve(host)
    assert (target.connect_timeout, target.keepalive_interval, target.keepalive_count_max) == (
        1,
        7,
        4,
    )
    assert target.from_ssh_config >= {"hostname", "port", "connect_timeout"}
    path = write_hosts(tmp_path, {"slow": host.model_dump(exclude_defaults=True)})
    started = time.monotonic()
    result = cli("run", "slow", "-c", str(path), "--", "true")
    assert result.returncode != 0 and "timed out after 1s" in result.stderr, result.stderr
    assert time.monotonic() - started < 8  # not the console's own 10 s
    # hosts.yaml's own values still win, and with neither the console's defaults apply
    mine = Host(address="slow", ssh_config=str(config), keepalive_interval=2, connect_timeout=3)
    assert (resolve(mine).keepalive_interval, resolve(mine).connect_timeout) == (2, 3)
    bare = resolve(Host(address="127.0.0.1", ssh_config="none"))
    assert (bare.port, bare.connect_timeout, bare.keepalive_interval) == (22, 10, 5)
    hang.close()


def test_proxy_jump_in_the_ssh_config_goes_through_the_jump_host(sshd_factory, ssh_keys, tmp_path):
    jump, inner = sshd_factory(), sshd_factory()
    text = alias_block("bastion", jump, ssh_keys) + alias_block(
        "inner", inner, ssh_keys, ProxyJump="bastion"
    )
    config = ssh_config(tmp_path, text)
    path = write_hosts(tmp_path, {"lab": {"address": "inner", "ssh_config": str(config)}})
    result = cli("run", "lab", "-c", str(path), "--", "sh", "-c", 'echo "$SSH_CONNECTION"')
    assert result.returncode == 0, result.stderr
    assert result.stdout.split()[2:4] == [inner.address, str(inner.port)]
    deadline = time.monotonic() + 5
    needle = f"target {inner.address} port {inner.port}"
    while needle not in jump.log.read_text() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert needle in jump.log.read_text()  # the jump host's sshd opened the channel to inner


# ------------------------------------------------------------ passphrase keys


@pytest.fixture
def locked_key(sshd, ssh_keys, tmp_path) -> Path:
    """A passphrase-protected key made by ssh-keygen, authorized on the test sshd."""
    key = tmp_path / "id_locked"
    subprocess.run(
        ["ssh-keygen", "-q", "-t", "ed25519", "-N", "sesame", "-C", "locked", "-f", str(key)],
        check=True,
    )
    with open(ssh_keys.authorized_keys, "a") as fh:
        fh.write(key.with_suffix(".pub").read_text())
    return key


@pytest.fixture
def agent(tmp_path):
    """A real ssh-agent on its own socket (never the session's)."""
    sock = tmp_path / "agent.sock"
    proc = subprocess.Popen(["ssh-agent", "-D", "-a", str(sock)], stdout=subprocess.DEVNULL)
    deadline = time.monotonic() + 10
    while not sock.exists() and time.monotonic() < deadline:
        time.sleep(0.02)
    yield sock
    proc.terminate()
    proc.wait(5)


def ssh_add(agent: Path, key: Path, passphrase: str, tmp_path: Path) -> None:
    askpass = tmp_path / "askpass"
    askpass.write_text(f"#!/bin/sh\necho {passphrase}\n")
    askpass.chmod(0o700)
    env = {
        **os.environ,
        "SSH_AUTH_SOCK": str(agent),
        "SSH_ASKPASS": str(askpass),
        "SSH_ASKPASS_REQUIRE": "force",
        "DISPLAY": ":0",
    }
    done = subprocess.run(
        ["ssh-add", str(key)], env=env, stdin=subprocess.DEVNULL, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr


def test_a_passphrase_key_without_an_agent_is_one_clear_line(sshd, locked_key, tmp_path):
    path = write_hosts(tmp_path, {"lab": sshd.host_entry(identity_file=str(locked_key))})
    expected = (
        f"identity file {locked_key} is passphrase-protected and no ssh-agent holds it: "
        f"ssh-add {locked_key}"
    )
    result = cli("run", "lab", "-c", str(path), "--", "true")
    assert result.returncode != 0 and expected in result.stderr, result.stderr
    assert "Traceback" not in result.stderr and len(result.stderr.strip().splitlines()) == 1
    status = cli("status", "-c", str(path), "--json", "--timeout", "20")
    error = json.loads(status.stdout)["hosts"]["lab"]["error"]
    assert expected in error and "internal error" not in error


def test_a_passphrase_key_is_used_through_the_agent_that_holds_it(
    sshd, locked_key, agent, tmp_path
):
    path = write_hosts(tmp_path, {"lab": sshd.host_entry(identity_file=str(locked_key))})
    env = {"SSH_AUTH_SOCK": str(agent)}
    empty = cli("run", "lab", "-c", str(path), "--", "echo", "hi", env=env)
    assert "passphrase-protected and no ssh-agent holds it" in empty.stderr  # agent without it
    ssh_add(agent, locked_key, "sesame", tmp_path)
    result = cli("run", "lab", "-c", str(path), "--", "echo", "hi", env=env)
    assert result.returncode == 0 and result.stdout.strip() == "hi", result.stderr
    # it was this key that logged in, through the agent
    log = sshd.log.read_text()
    fingerprint = subprocess.run(
        ["ssh-keygen", "-lf", str(locked_key.with_suffix(".pub"))], capture_output=True, text=True
    ).stdout.split()[1]
    assert f"Accepted publickey for {user()}" in log and fingerprint in log


# --------------------------------------------------------------- missing files


def test_a_missing_identity_file_is_named_and_check_fails(sshd, tmp_path):
    missing = tmp_path / "no" / "id_ed25519"
    path = write_hosts(tmp_path, {"lab": sshd.host_entry(identity_file=str(missing))})
    result = cli("run", "lab", "-c", str(path), "--", "true")
    assert result.returncode != 0 and f"identity file {missing} does not exist" in result.stderr
    check = cli("check", "-c", str(path))
    assert check.returncode == 2, check.stdout + check.stderr
    assert f"hosts.lab.identity_file: identity file {missing} does not exist" in check.stderr
    assert "ok (" not in check.stdout


def test_a_missing_known_hosts_file_is_named_and_check_fails(sshd, tmp_path):
    missing = tmp_path / "known_hosts_gone"
    path = write_hosts(tmp_path, {"lab": sshd.host_entry(known_hosts=str(missing))})
    result = cli("run", "lab", "-c", str(path), "--", "true")
    assert result.returncode != 0 and f"known_hosts file {missing} does not exist" in result.stderr
    assert "ssh-keyscan -p" in result.stderr
    check = cli("check", "-c", str(path))
    assert check.returncode == 2
    assert f"hosts.lab.known_hosts: known_hosts file {missing} does not exist" in check.stderr


def test_files_named_by_the_ssh_config_are_checked_too(sshd, ssh_keys, tmp_path):
    missing = tmp_path / "id_missing"
    text = alias_block("gpu-alias", sshd, ssh_keys).replace(
        f"IdentityFile {ssh_keys.client_key}", f"IdentityFile {missing}"
    )
    config = ssh_config(tmp_path, text)
    path = write_hosts(tmp_path, {"lab": {"address": "gpu-alias", "ssh_config": str(config)}})
    result = cli("run", "lab", "-c", str(path), "--", "true")
    assert f"identity file {missing} does not exist (IdentityFile in ssh_config)" in result.stderr
    check = cli("check", "-c", str(path))
    assert check.returncode == 2 and f"IdentityFile {missing}" in check.stderr
    gone = write_hosts(tmp_path, {"lab": {"address": "x", "ssh_config": str(tmp_path / "nope")}})
    check = cli("check", "-c", str(gone))
    assert check.returncode == 2 and f"ssh_config file {tmp_path / 'nope'}" in check.stderr


# ------------------------------------------------------------------ ciphers


async def negotiated_cipher(host: Host) -> str:
    conn = SshHost("lab", host)
    try:
        return (await conn.connect()).get_extra_info("send_cipher")
    finally:
        await conn.close()


async def test_aes_gcm_is_asked_first_unless_the_ssh_config_names_ciphers(sshd, tmp_path):
    """AES-GCM costs the console a fraction of asyncssh's ChaCha20 per packet; an operator's
    Ciphers line is theirs to keep."""
    plain = Host.model_validate(sshd.host_entry())
    assert await negotiated_cipher(plain) == "aes128-gcm@openssh.com"
    config = ssh_config(tmp_path, "Host *\n  Ciphers chacha20-poly1305@openssh.com\n")
    theirs = Host.model_validate(sshd.host_entry(ssh_config=str(config)))
    assert await negotiated_cipher(theirs) == "chacha20-poly1305@openssh.com"
