"""The SSH layer against a real OpenSSH sshd on loopback."""

from __future__ import annotations

import asyncio
import json
import socket
import time

import asyncssh
import pytest

from sglconsole.config import Host
from sglconsole.errors import HostKeyError, HostUnreachable, RemoteCommandFailed
from sglconsole.remote.ssh.connection import SshFleet, SshHost
from sglconsole.sim.gpustate import pid_alive

ECHO_ARGV = ["python3", "-c", "import json, sys; print(json.dumps(sys.argv[1:]))"]

HOSTILE = [
    "two words",
    "it's",
    'say "hi"',
    "a; touch /tmp/sglconsole-pwned",
    "$(touch /tmp/sglconsole-pwned)",
    "`touch /tmp/sglconsole-pwned`",
    "line1\nline2",
    "tab\there",
    "*",
    "",
    "-rf",
    "$HOME",
    "back\\slash",
    "ünïcødé ✓",
    "&& echo nope ||",
]


def host(sshd, **overrides) -> Host:
    return Host.model_validate(sshd.host_entry(**overrides))


async def test_hostile_arguments_arrive_byte_exact(sshd):
    conn = SshHost("a", host(sshd))
    result = await conn.run([*ECHO_ARGV, *HOSTILE], check=True)
    assert json.loads(result.stdout) == HOSTILE
    await conn.close()


async def test_nothing_hostile_runs(sshd, tmp_path):
    marker = tmp_path / "pwned"
    conn = SshHost("a", host(sshd))
    evil = [f"; touch {marker}", f"$(touch {marker})", f"`touch {marker}`", f"\ntouch {marker}\n"]
    await conn.run(["echo", *evil], check=True)
    await conn.close()
    assert not marker.exists()


async def test_exec_prefix_wraps_every_command(sshd):
    conn = SshHost("a", host(sshd, exec_prefix=["env", "SGLCONSOLE_INSIDE=ct129"]))
    script = (
        "import json, os, sys; "
        "print(json.dumps([os.environ.get('SGLCONSOLE_INSIDE'), sys.argv[1:]]))"
    )
    result = await conn.run(["python3", "-c", script, *HOSTILE], check=True)
    assert json.loads(result.stdout) == ["ct129", HOSTILE]
    await conn.close()


async def test_exec_prefix_through_sh_c(sshd):
    prefix = ["sh", "-c", 'cd / && exec "$@"', "wrapper"]
    conn = SshHost("a", host(sshd, exec_prefix=prefix))
    result = await conn.run([*ECHO_ARGV, *HOSTILE], check=True)
    assert json.loads(result.stdout) == HOSTILE
    await conn.close()


async def test_one_connection_is_reused(sshd):
    conn = SshHost("a", host(sshd))
    first = await conn.connect()
    results = await asyncio.gather(*(conn.run(["echo", str(i)]) for i in range(10)))
    assert [r.stdout.strip() for r in results] == [str(i) for i in range(10)]
    assert await conn.connect() is first
    await conn.close()


async def test_failed_command_is_typed(sshd):
    conn = SshHost("a", host(sshd))
    result = await conn.run(["sh", "-c", "echo oops >&2; exit 3"])
    assert result.exit_status == 3 and result.stderr.strip() == "oops"
    with pytest.raises(RemoteCommandFailed, match="exited 3: oops"):
        await conn.run(["sh", "-c", "echo oops >&2; exit 3"], check=True)
    await conn.close()


async def test_a_command_started_as_the_connection_is_lost_names_why_it_was_lost(sshd):
    """asyncssh ends a connection whose keepalives go unanswered by calling its protocol's
    connection_lost; a command started in that moment fails first with the channel's 'SSH
    connection closed'. The host's reason must be the connection's (a test under load saw it
    UNREACHABLE with the channel's words, no keepalive in them)."""
    for start in ("run", "stream"):
        conn = SshHost("a", host(sshd))
        connection = await conn.connect()
        connection.connection_lost(asyncssh.ConnectionLost("Server not responding to keepalive"))
        with pytest.raises(HostUnreachable) as lost:
            if start == "run":
                await conn.run(["echo", "hi"])
            else:
                await conn.stream(["echo", "hi"])
        assert "connection lost: Server not responding to keepalive" in str(lost.value), start
        await conn.close()


async def test_run_timeout_returns_no_status(sshd):
    conn = SshHost("a", host(sshd))
    started = time.monotonic()
    result = await conn.run(["sleep", "30"], timeout=0.5)
    assert result.exit_status is None and time.monotonic() - started < 5
    await conn.close()


async def test_jump_host_by_name(sshd_factory):
    a, b = sshd_factory(), sshd_factory()
    fleet = SshFleet({"a": host(a), "b": host(b, jump="a")})
    result = await fleet["b"].run(["sh", "-c", 'echo "$SSH_CONNECTION"'], check=True)
    assert result.stdout.split()[2] == b.address
    # b was reached through a: a's sshd opened the direct-tcpip channel to b
    deadline = time.monotonic() + 5
    while (
        f"target {b.address} port {b.port}" not in a.log.read_text() and time.monotonic() < deadline
    ):
        await asyncio.sleep(0.05)
    assert f"target {b.address} port {b.port}" in a.log.read_text()
    await fleet.close()


async def test_jump_host_down_is_reported(sshd_factory):
    b = sshd_factory()
    dead_port = _closed_port()
    fleet = SshFleet(
        {"a": Host(address="127.0.0.1", port=dead_port, connect_timeout=2), "b": host(b, jump="a")}
    )
    with pytest.raises(HostUnreachable, match="jump host a: connection refused"):
        await fleet["b"].run(["true"])
    await fleet.close()


async def test_unknown_host_key_is_refused(sshd_factory, tmp_path):
    server = sshd_factory(trust=False)
    empty = tmp_path / "known_hosts"
    empty.write_text("")
    conn = SshHost("x", host(server, known_hosts=str(empty)))
    with pytest.raises(HostKeyError) as info:
        await conn.run(["true"])
    message = str(info.value)
    assert "unknown" in message and "ssh-keyscan -p" in message and "SHA256:" in message


async def test_changed_host_key_is_refused(sshd_factory, tmp_path):
    server = sshd_factory(trust=False)
    other = sshd_factory(trust=False)
    wrong = tmp_path / "known_hosts"
    wrong.write_text(f"[{server.address}]:{server.port} {other.host_public}\n")
    with pytest.raises(HostKeyError, match="CHANGED"):
        await SshHost("x", host(server, known_hosts=str(wrong))).run(["true"])


async def test_refused_and_hanging_hosts_fail_alone_and_concurrently(sshd):
    hang = socket.socket()
    hang.bind(("127.0.0.1", 0))
    hang.listen(5)  # accepts the TCP handshake, never speaks SSH
    fleet = SshFleet(
        {
            "ok": host(sshd),
            "refused": Host(address="127.0.0.1", port=_closed_port(), connect_timeout=1),
            "hangs": Host(address="127.0.0.1", port=hang.getsockname()[1], connect_timeout=1),
        }
    )
    started = time.monotonic()
    results = await asyncio.gather(
        *(fleet[n].run(["echo", n]) for n in ("ok", "refused", "hangs")), return_exceptions=True
    )
    elapsed = time.monotonic() - started
    assert results[0].stdout.strip() == "ok"
    assert isinstance(results[1], HostUnreachable) and "refused" in str(results[1])
    assert isinstance(results[2], HostUnreachable) and "timed out after 1s" in str(results[2])
    assert elapsed < 3.5  # concurrent: one timeout, not the sum
    hang.close()
    await fleet.close()


async def test_stream_yields_lines_as_they_come(sshd):
    conn = SshHost("a", host(sshd))
    stream = await conn.stream(["sh", "-c", "for i in 1 2 3; do echo line$i; sleep 0.2; done"])
    seen = []
    async for line in stream:
        seen.append((line, time.monotonic()))
    assert [s[0] for s in seen] == ["line1", "line2", "line3"]
    assert seen[2][1] - seen[0][1] > 0.3  # streamed, not buffered until exit
    await conn.close()


async def test_stream_batches_are_the_lines_as_they_arrive_together(sshd):
    """The GPU feed reads nvidia-smi's sample of every GPU in one await: lines written at once
    come as one batch, a line split across writes comes whole, a last line without its newline
    comes at EOF."""
    conn = SshHost("a", host(sshd))
    script = "printf 'a\\nb\\nc\\n'; sleep 0.3; printf 'd\\ne'; sleep 0.3; printf 'f\\ng'"
    stream = await conn.stream(["sh", "-c", script])
    batches = [batch async for batch in stream.batches()]
    assert batches == [["a", "b", "c"], ["d"], ["ef"], ["g"]]
    await conn.close()


async def test_stream_close_stops_the_remote_command(sshd, tmp_path):
    conn = SshHost("a", host(sshd))
    pidfile = tmp_path / "pid"
    stream = await conn.stream(
        ["sh", "-c", f"echo $$ > {pidfile}; while echo tick; do sleep 0.1; done"]
    )
    async for _ in stream:
        break
    await stream.close()
    pid = int(pidfile.read_text())
    deadline = time.monotonic() + 5
    while pid_alive(pid) and time.monotonic() < deadline:
        await asyncio.sleep(0.05)
    assert not pid_alive(pid)
    await conn.close()


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]
