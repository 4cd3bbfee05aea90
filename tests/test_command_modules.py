"""The CLI imports only the module of the subcommand a command line names
(sglconsole.commands.MODULES): that table must say where each subcommand is registered."""

from __future__ import annotations

import subprocess
import sys

import sglconsole.commands
from sglconsole.commands.registry import COMMANDS


def test_every_subcommand_is_found_in_its_module():
    sglconsole.commands.load()
    registered = {name: build.__module__ for name, (build, _help) in COMMANDS.items()}
    table = {
        name: f"sglconsole.commands.{module}"
        for name, module in sglconsole.commands.MODULES.items()
    }
    assert table == registered


def test_a_command_line_registers_the_subcommands_it_names_and_none_other():
    code = (
        "from sglconsole import cli; cli._load_commands(['-c', 'x.yaml', 'status', '--json']); "
        "from sglconsole.commands.registry import COMMANDS; print(sorted(COMMANDS))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout
    assert out.strip() == "['log-stats', 'parse-log', 'status']"
