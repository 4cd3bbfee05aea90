"""A real OpenSSH sshd on a loopback address, for tests.

Installs nothing: it needs /usr/sbin/sshd (Debian's openssh-server, which
.ci/run installs). Each server gets its own generated host key, a shared
generated client key in authorized_keys, and entries in a shared known_hosts.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import asyncssh

SSHD = os.environ.get("SGLCONSOLE_SSHD", shutil.which("sshd") or "/usr/sbin/sshd")


def free_port(address: str) -> int:
    with socket.socket() as sock:
        sock.bind((address, 0))
        return sock.getsockname()[1]


def wait_listening(
    address: str, port: int, timeout: float = 10.0, alive: subprocess.Popen | None = None
) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and (alive is None or alive.poll() is None):
        try:
            with socket.create_connection((address, port), timeout=0.5):
                return
        except OSError:
            time.sleep(0.02)
    raise TimeoutError(f"nothing listens on {address}:{port}")


@dataclass
class Keys:
    """A client key pair and a known_hosts file shared by all test servers."""

    dir: Path
    client_key: Path = field(init=False)
    known_hosts: Path = field(init=False)
    authorized_keys: Path = field(init=False)

    def __post_init__(self) -> None:
        self.dir.mkdir(parents=True, exist_ok=True)
        self.client_key = self.dir / "id_ed25519"
        self.known_hosts = self.dir / "known_hosts"
        self.authorized_keys = self.dir / "authorized_keys"
        key = asyncssh.generate_private_key("ssh-ed25519")
        key.write_private_key(str(self.client_key))
        os.chmod(self.client_key, 0o600)
        self.authorized_keys.write_bytes(key.export_public_key())
        self.known_hosts.touch()


@dataclass
class Sshd:
    address: str
    keys: Keys
    workdir: Path
    extra_config: str = ""
    path_dirs: tuple[str, ...] = ()
    port: int = 0
    proc: subprocess.Popen | None = None

    def start(self, trust: bool = True) -> Sshd:
        self.workdir.mkdir(parents=True, exist_ok=True)
        Path("/run/sshd").mkdir(mode=0o755, parents=True, exist_ok=True)  # privilege separation dir
        self.port = self.port or free_port(self.address)
        host_key = asyncssh.generate_private_key("ssh-ed25519")
        host_key_path = self.workdir / "host_ed25519"
        host_key.write_private_key(str(host_key_path))
        os.chmod(host_key_path, 0o600)
        self.host_public = host_key.export_public_key().decode().strip()
        if trust:
            self.trust()
        config = self.workdir / "sshd_config"
        path = ":".join(
            [
                *self.path_dirs,
                os.path.dirname(sys.executable),
                "/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin",
            ]
        )
        config.write_text(
            f"""Port {self.port}
ListenAddress {self.address}
HostKey {host_key_path}
AuthorizedKeysFile {self.keys.authorized_keys}
PidFile {self.workdir}/sshd.pid
UsePAM no
StrictModes no
PermitRootLogin yes
PasswordAuthentication no
KbdInteractiveAuthentication no
PubkeyAuthentication yes
AllowTcpForwarding yes
MaxStartups 200:30:400
MaxSessions 200
LogLevel DEBUG1
SetEnv PATH={path}
{self.extra_config}
"""
        )
        self.log = self.workdir / "sshd.log"
        self.proc = subprocess.Popen(
            [SSHD, "-D", "-f", str(config), "-E", str(self.log)], stderr=subprocess.PIPE, text=True
        )
        try:
            wait_listening(self.address, self.port, alive=self.proc)
        except TimeoutError as exc:  # sshd's own words, not only "nothing listens"
            said = self.proc.stderr.read() if self.proc.poll() is not None else ""
            log = self.log.read_text(errors="replace")[-1500:] if self.log.exists() else ""
            raise RuntimeError(f"{exc}: {said.strip()} {log.strip()}".strip()) from None
        return self

    def trust(self) -> None:
        with open(self.keys.known_hosts, "a") as fh:
            fh.write(f"[{self.address}]:{self.port} {self.host_public}\n")

    def stop(self) -> None:
        if self.proc and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(5)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()

    def host_entry(self, **overrides) -> dict:
        entry = {
            "address": self.address,
            "port": self.port,
            "user": os.environ.get("USER") or _whoami(),
            "identity_file": str(self.keys.client_key),
            "known_hosts": str(self.keys.known_hosts),
            "connect_timeout": 5,
        }
        entry.update(overrides)
        return entry


def _whoami() -> str:
    import pwd

    return pwd.getpwuid(os.getuid()).pw_name
