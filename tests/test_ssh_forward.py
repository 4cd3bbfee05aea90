"""Port forwards end in private UNIX sockets (issue #16), against a real OpenSSH sshd on loopback:
HTTP works through them, another local user cannot connect to them (where a loopback TCP port,
what forwards used to be, lets it in), and they go away with their connection and process."""

from __future__ import annotations

import http.server
import os
import shutil
import socket
import stat
import subprocess
import sys
import tempfile
import threading
from pathlib import Path

import pytest

from sglconsole.config import Host
from sglconsole.remote.ssh.connection import SshHost

NOBODY = 65534
# exit 0: connected; 13: PermissionError; 1: any other error (printed)
CONNECT = """
import socket, sys
kind, where = sys.argv[1], sys.argv[2]
family = socket.AF_UNIX if kind == "unix" else socket.AF_INET
target = where if kind == "unix" else ("127.0.0.1", int(where))
try:
    socket.socket(family).connect(target)
except PermissionError as exc:
    print(exc); sys.exit(13)
except OSError as exc:
    print(repr(exc)); sys.exit(1)
"""


def host(sshd) -> Host:
    return Host.model_validate(sshd.host_entry())


class _Hello(http.server.BaseHTTPRequestHandler):
    """Answers with the path and the Host header it was sent."""

    def do_GET(self):
        body = f"hello {self.path} for {self.headers['Host']}".encode()
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


@pytest.fixture
def web():
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Hello)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield server.server_address[1]
    server.shutdown()
    server.server_close()


def as_nobody(*argv: str) -> subprocess.CompletedProcess:
    become = ["setpriv", f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups"]
    return subprocess.run(
        [*become, *argv], capture_output=True, text=True, timeout=30, cwd="/", env={}
    )


@pytest.fixture(scope="module")
def nobody_python() -> str:
    """A python3 that user 65534 may run (root's pyenv shims, say, it may not)."""
    if os.getuid() != 0:
        pytest.skip("needs root to connect as another user (setpriv)")
    if shutil.which("setpriv") is None:
        pytest.skip("needs setpriv (util-linux)")
    for python in ("/usr/bin/python3", shutil.which("python3"), sys.executable):
        if python and as_nobody(python, "-c", "pass").returncode == 0:
            return python
    pytest.skip(f"no python3 that uid {NOBODY} may run")


async def test_a_forward_is_a_private_socket_that_carries_http(sshd, web):
    conn = SshHost("a", host(sshd))
    endpoint = await conn.forward(web)
    try:
        info = os.stat(endpoint.socket)
        folder = os.stat(os.path.dirname(endpoint.socket))
        assert stat.S_ISSOCK(info.st_mode) and stat.S_IMODE(info.st_mode) == 0o600
        assert stat.S_IMODE(folder.st_mode) == 0o700 and folder.st_uid == os.getuid()
        assert len(os.fsencode(endpoint.socket)) <= 107
        assert endpoint.base_url == f"http://127.0.0.1:{web}"
        async with endpoint.client(timeout=10) as client:
            response = await client.get("/x")
        # the Host header names the server as its host reaches it, not a local port
        assert response.text == f"hello /x for 127.0.0.1:{web}"
        assert await conn.forward(web) == endpoint  # one socket per remote address and port
        other = await conn.forward(web, "localhost")
        assert other.socket != endpoint.socket and other.base_url == f"http://localhost:{web}"
    finally:
        await conn.close()
    assert not os.path.exists(endpoint.socket) and not os.path.exists(other.socket)


async def test_another_local_user_cannot_connect_to_a_forward(sshd, web, nobody_python):
    # the control: here, another user does reach a loopback TCP port (what a forward used to be)
    tcp = as_nobody(nobody_python, "-c", CONNECT, "tcp", str(web))
    assert tcp.returncode == 0, tcp.stdout + tcp.stderr
    conn = SshHost("a", host(sshd))
    try:
        endpoint = await conn.forward(web)
        assert os.path.exists(endpoint.socket)
        denied = as_nobody(nobody_python, "-c", CONNECT, "unix", endpoint.socket)
        assert denied.returncode == 13, denied.stdout + denied.stderr
        # and the socket itself refuses, should its directory ever be opened up
        folder = os.path.dirname(endpoint.socket)
        os.chmod(folder, 0o755)
        try:
            by_mode = as_nobody(nobody_python, "-c", CONNECT, "unix", endpoint.socket)
        finally:
            os.chmod(folder, 0o700)
        assert by_mode.returncode == 13, by_mode.stdout + by_mode.stderr
        async with endpoint.client(timeout=10) as client:  # while its owner still gets through
            assert (await client.get("/y")).status_code == 200
    finally:
        await conn.close()


async def test_a_lost_connection_takes_its_sockets_and_the_next_forward_works(sshd, web):
    conn = SshHost("a", host(sshd))
    try:
        first = await conn.forward(web)
        ssh = await conn.connect()
        ssh.close()  # the link drops (not a close by the console)
        await ssh.wait_closed()
        assert not conn.connected
        assert not os.path.exists(first.socket)
        again = await conn.forward(web)
        assert again.socket != first.socket and os.path.exists(again.socket)
        async with again.client(timeout=10) as client:
            assert (await client.get("/z")).text == f"hello /z for 127.0.0.1:{web}"
    finally:
        await conn.close()
    assert not os.path.exists(again.socket)


def _socket_dir_of_a_process(env: dict[str, str]) -> tuple[Path, bool]:
    """(the directory a console process used, whether it existed while the process ran)."""
    code = (
        "import os; from sglconsole.remote.ssh import forward_sockets as f; "
        "p = os.path.dirname(f.SOCKETS.new_socket(30000)); print(p, os.path.isdir(p))"
    )
    done = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, **env},
        check=True,
    )
    path, existed = done.stdout.split()
    return Path(path), existed == "True"


@pytest.fixture
def short_tmp():
    """A folder with a short path: a socket's path holds 107 bytes, and pytest's tmp_path in a
    parallel run (/tmp/pytest-of-USER/pytest-N/popen-gwK/test_name0/) leaves too little room."""
    folder = Path(tempfile.mkdtemp(prefix="sglc-"))
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


def test_the_socket_dir_is_in_the_runtime_dir_and_goes_with_the_process(short_tmp):
    runtime = short_tmp / "run"
    runtime.mkdir(mode=0o700)
    used, existed = _socket_dir_of_a_process({"XDG_RUNTIME_DIR": str(runtime)})
    assert existed and used.parent == runtime and used.name.startswith("sglconsole-")
    assert not used.exists()


def test_without_a_usable_runtime_dir_the_temp_dir_is_used(short_tmp):
    temp = short_tmp / "tmp"
    temp.mkdir()
    too_long = short_tmp / ("x" * 90)
    too_long.mkdir()
    for runtime in (str(short_tmp / "missing"), str(too_long)):
        used, existed = _socket_dir_of_a_process({"XDG_RUNTIME_DIR": runtime, "TMPDIR": str(temp)})
        assert existed and used.parent == temp, (runtime, used)
        assert not used.exists()


def test_leftovers_of_killed_consoles_are_swept_and_live_ones_kept(short_tmp):
    """A console killed with SIGKILL never runs its exit hook: the next console removes its
    directory, but never one whose process lives or whose socket still answers."""
    temp = short_tmp / "tmp"
    temp.mkdir()
    dead_pid = subprocess.Popen(["true"])  # a pid that no longer exists once waited for
    dead_pid.wait()
    killed = temp / f"sglconsole-{dead_pid.pid}-abcdefgh"
    killed.mkdir(mode=0o700)
    with socket.socket(socket.AF_UNIX) as stale:
        stale.bind(str(killed / "1-30000"))  # left behind: nothing listens any more
    sleeper = subprocess.Popen(["sleep", "60"])
    living = temp / f"sglconsole-{sleeper.pid}-abcdefgh"
    living.mkdir(mode=0o700)
    answering = temp / f"sglconsole-{dead_pid.pid}-zzzzzzzz"  # another PID namespace's, say
    answering.mkdir(mode=0o700)
    listener = socket.socket(socket.AF_UNIX)
    listener.bind(str(answering / "1-30000"))
    listener.listen()
    other = temp / "sglconsole-notapid"
    other.mkdir()
    try:
        used, existed = _socket_dir_of_a_process({"TMPDIR": str(temp), "XDG_RUNTIME_DIR": ""})
    finally:
        sleeper.kill()
        sleeper.wait()
        listener.close()
    assert existed and used.parent == temp
    assert not killed.exists()
    assert living.exists() and answering.exists() and other.exists()
