from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import settings

from tests.sshd import SSHD, Keys, Sshd

pytest_plugins = ["tests.fleets"]

# Fuzzing explores new inputs on every developer run; CI replays a fixed set, so that a landing is
# judged on the code, not on a lucky draw (what a developer's run finds is pinned with @example).
settings.register_profile("ci", derandomize=True, print_blob=True)
if os.environ.get("CI"):
    settings.load_profile("ci")

REPO = Path(__file__).resolve().parents[1]
FIXTURES = REPO / "tests" / "fixtures"


def pytest_configure(config):
    # --dist loadfile hands out whole files, by default the files with most tests first: the bench
    # smoke lanes (a test or five, minutes each) came last and ran on after every other file had
    # finished. The order is pytest_collection_modifyitems' below instead (xdist keeps it).
    if getattr(config.option, "dist", "no") in ("loadfile", "loadscope"):
        config.option.loadscopereorder = False


def pytest_collection_modifyitems(config, items):
    """Files marked long_file(SECONDS) first, the longest first, then as xdist would order them:
    most tests first; a file's tests keep their order. Only on an xdist worker: what its
    collection says is the order the files are handed out in."""
    if not hasattr(config, "workerinput"):
        return
    files: dict[str, list] = {}
    for item in items:
        files.setdefault(item.nodeid.partition("::")[0], []).append(item)

    def key(tests: list) -> tuple[float, int]:
        long = tests[0].get_closest_marker("long_file")
        return (-(long.args[0] if long else 0), -len(tests))

    items[:] = [item for tests in sorted(files.values(), key=key) for item in tests]


@pytest.fixture(autouse=True)
def private_state(tmp_path_factory, monkeypatch):
    """Each test its own $XDG_STATE_HOME: audit log, rollback snapshots and the host-parser cache of
    one test never answer for another (CLI subprocesses inherit it)."""
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path_factory.mktemp("state")))


@pytest.fixture(scope="session")
def ssh_keys(tmp_path_factory) -> Keys:
    return Keys(tmp_path_factory.mktemp("ssh-keys"))


@pytest.fixture(scope="session")
def sshd_factory(tmp_path_factory, ssh_keys):
    """Start real OpenSSH servers on 127.0.W.2, 127.0.W.3, ... (one address each; W: this test
    worker's own, so a port another worker picked on the same address at the same moment can
    never be taken for ours)."""
    if not os.path.exists(SSHD):
        pytest.fail(f"{SSHD} is missing: install openssh-server (.ci/run does)")
    started: list[Sshd] = []
    counter = iter(range(2, 250))
    worker = os.environ.get("PYTEST_XDIST_WORKER", "gw-1").removeprefix("gw")  # serial: 0
    network = f"127.0.{int(worker) + 1}"

    def start(extra_config: str = "", trust: bool = True, address: str | None = None) -> Sshd:
        address = address or f"{network}.{next(counter)}"
        server = Sshd(address, ssh_keys, tmp_path_factory.mktemp(f"sshd-{address}"), extra_config)
        started.append(server.start(trust=trust))
        return server

    yield start
    for server in started:
        server.stop()


@pytest.fixture(scope="session")
def sshd(sshd_factory) -> Sshd:
    return sshd_factory()
