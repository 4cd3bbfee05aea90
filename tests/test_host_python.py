"""The host helpers run on the hosts' own python3, which may be as old as 3.6: vermin checks that
their syntax and standard-library use parse there (a walrus or an f-string `=` cannot slip in).

sglconsole/remote/agents/__init__.py is not a helper: it runs in the console (Python 3.11+) and
only reads the helpers' files. The one-line bootstrap that carries `python -c` code to the host
runs there too, so it is checked with them.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from sglconsole.remote import agents
from sglconsole.remote.agents import source
from sglconsole.remote.ssh.transport import bootstrap

AGENTS = Path(agents.__file__).parent
HELPERS = sorted(p for p in AGENTS.glob("*.py") if p.name != "__init__.py")


def vermin(*paths: Path) -> subprocess.CompletedProcess:
    exe = Path(sys.executable).with_name("vermin")
    command = str(exe) if exe.exists() else shutil.which("vermin")
    if command is None:
        pytest.fail("vermin is missing: it is a dev dependency (pip install -e '.[dev]')")
    return subprocess.run(
        [
            command,
            "-t=3.6-",
            "--violations",
            "--no-tips",
            "--feature",
            "fstring-self-doc",
            "--no-parse-comments",
            *map(str, paths),
        ],
        capture_output=True,
        text=True,
    )


def test_there_are_helpers_to_check():
    assert {p.stem for p in HELPERS} >= {"watcher_agent", "kill_agent", "launch_agent"}


def test_every_helper_parses_for_python_3_6(tmp_path):
    sent = tmp_path / "bootstrap.py"
    sent.write_text(bootstrap("print('hello')\n") + "\n")
    # and each program as the host gets it, with the parts source() inlines
    programs = []
    for helper in HELPERS:
        program = tmp_path / f"sent_{helper.name}"
        program.write_text(source(helper.stem))
        assert "# inlined by source()" not in program.read_text()
        programs.append(program)
    result = vermin(*HELPERS, *programs, sent)
    assert result.returncode == 0, result.stdout + result.stderr


@pytest.mark.parametrize(
    "newer",
    [
        "import sys\nif (n := len(sys.argv)):\n    print(n)\n",  # walrus: 3.8
        "x = 1\nprint(f'{x=}')\n",  # self-documenting f-string: 3.8
        "def f(a, /):\n    return a\n",  # positional-only parameters: 3.8
        "print('x'.removeprefix('y'))\n",  # str.removeprefix: 3.9
    ],
)
def test_the_check_catches_what_3_6_cannot_run(tmp_path, newer):
    helper = tmp_path / "new_agent.py"
    helper.write_text(newer)
    assert vermin(helper).returncode != 0
