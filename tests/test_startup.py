"""A `sglconsole` start: asyncssh's native library look-ups (remote.ssh.libraries) answer as
ctypes did, without spawning ldconfig, gcc or ld."""

from __future__ import annotations

import ctypes.util
import json
import subprocess
import sys
import textwrap

import pytest

from sglconsole.remote.ssh import libraries

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="Linux look-ups")

ASYNCSSH_LIBS = """
import asyncssh.crypto.pq as pq, asyncssh.crypto.umac as umac
print(json.dumps([umac._nettle_lib, pq._oqs_lib]))
"""


def _run(code: str) -> str:
    done = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True, check=True
    )
    return done.stdout


def _ctypes_find(name: str) -> str | None:
    try:
        return libraries._original(name)
    except OSError:  # 3.11's gcc fallback can fail on a name it cannot find (liblibnettle.a)
        return None


@pytest.mark.parametrize("name", ["nettle", "oqs", "liboqs", "libnettle-6", "ssl", "z", "m"])
def test_find_answers_as_ctypes(name):
    assert libraries.find(name) == _ctypes_find(name)


def test_asyncssh_finds_what_it_found_before():
    plain = _run("import json\n" + ASYNCSSH_LIBS)
    ours = _run("import json, sglconsole.remote\n" + ASYNCSSH_LIBS)
    assert json.loads(ours) == json.loads(plain)


def test_other_names_still_go_to_ctypes():
    assert libraries._find_library("z") == ctypes.util.find_library("z")
    assert libraries.ASYNCSSH_NAMES.isdisjoint({"z", "c", "ssl"})


def test_status_starts_without_spawning_a_lookup():
    spawned = _run(
        """
        import json, subprocess
        spawned = []
        real = subprocess.Popen.__init__
        def record(self, args, *a, **k):
            spawned.append(args if isinstance(args, str) else [str(x) for x in args])
            real(self, args, *a, **k)
        subprocess.Popen.__init__ = record
        import sglconsole.commands.status, sglconsole.remote.monitor, asyncssh
        print(json.dumps(spawned))
        """
    )
    assert json.loads(spawned) == []
