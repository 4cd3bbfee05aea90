"""One action registry: the CLI's subcommands and the console's keys are the same actions."""

from __future__ import annotations

import subprocess
import sys

import sglconsole.commands
from sglconsole.catalog import ACTIONS
from sglconsole.commands.registry import COMMANDS
from sglconsole.tui import gating
from sglconsole.tui.keys import KEYS, action_name
from sglconsole.tui.screens.main import GATED, MainScreen

sglconsole.commands.load()  # every subcommand registers itself


def test_the_cli_and_the_console_offer_the_same_actions():
    names = set(ACTIONS)
    assert names == {
        "kill",
        "relaunch",
        "restore",
        "rollback",
        "probe",
        "bench",
        "capture",
        "router-in",
        "upgrade",
    }
    # the CLI: a subcommand for each (the generic ones described by the registry itself)
    assert names <= set(COMMANDS)
    for name, action in ACTIONS.items():
        if action.command:
            assert COMMANDS[name][1] == action.help, name
    # the console: a key for each, the registry's, and a handler behind it
    keys = {key.id: key.binding.key for key in KEYS if key.id in names}
    assert keys == {name: action.key for name, action in ACTIONS.items()}
    for key in KEYS:
        if key.id in names:
            assert callable(getattr(MainScreen, f"action_{key.name}", None)), key.id


def test_what_asks_first_has_a_plan_to_show():
    for action in ACTIONS.values():
        assert not action.confirm or action.plan is not None, action.name
    assert {a.name for a in ACTIONS.values() if a.confirm} == {
        "kill",
        "relaunch",
        "restore",
        "rollback",
        "bench",  # it loads a live server its users share
        "router-in",  # it sends a router's users to the server
        "upgrade",  # it stops the server for a canary
    }


def test_each_key_shows_its_action_record():
    """Label and tip come from the action's one record, as the key and the CLI help do."""
    for key in KEYS:
        if key.id in ACTIONS:
            action = ACTIONS[key.id]
            assert (key.binding.description, key.binding.tooltip) == (action.label, action.tip)


def test_every_action_is_gated_by_what_its_record_needs():
    """A new action gets its key's gating (replay, busy, read-only, needs) from its record."""
    for action in ACTIONS.values():
        name = action_name(action.name)
        assert name in gating.ACTS and name in gating.NEEDS_SERVER and name in GATED, name
        assert (name in gating.CHANGES_HOST) == action.changes_host, name
        assert gating.NEEDS.get(name, ()) == action.needs, name


IMPORT_ALONE = """
import sys
from sglconsole.catalog import ACTIONS
from sglconsole.actions import registry
print(sorted(ACTIONS))
print(getattr(registry, "ACTIONS", None) is None, "sglconsole.tui" in sys.modules)
"""


def test_the_registry_is_complete_whatever_was_imported_first():
    """No import is load-bearing: a fresh interpreter that imports only the registry has every
    action (the bench's too), and the actions layer keeps no partial registry to be read early."""
    ran = subprocess.run(
        [sys.executable, "-c", IMPORT_ALONE], capture_output=True, text=True, timeout=60
    )
    assert ran.returncode == 0, ran.stderr
    names, partial = ran.stdout.splitlines()
    assert names == str(sorted(ACTIONS)) and "'bench'" in names
    assert partial == "True False"
