"""Shell completion (argcomplete), as bash asks for it: subcommands and their flags."""

from __future__ import annotations

import os
import subprocess
import sys


def complete(line: str, tmp_path) -> list[str]:
    answer = tmp_path / "completions"
    env = {
        **os.environ,
        "_ARGCOMPLETE": "1",
        "_ARGCOMPLETE_IFS": "\n",
        "COMP_LINE": line,
        "COMP_POINT": str(len(line)),
        "_ARGCOMPLETE_STDOUT_FILENAME": str(answer),
    }
    result = subprocess.run(
        [sys.executable, "-m", "sglconsole"], env=env, capture_output=True, text=True, timeout=60
    )
    assert result.returncode == 0, result.stderr
    return answer.read_text().split("\n")


def test_subcommands_and_flags_complete(tmp_path):
    assert {"status", "restore", "exporter"} <= set(complete("sglconsole ", tmp_path))
    assert complete("sglconsole stat", tmp_path) == ["status "]
    assert "--drift-timeout " in complete("sglconsole status --d", tmp_path)
