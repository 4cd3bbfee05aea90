"""One action registry: the CLI's subcommands and the console's keys are the same actions."""

from __future__ import annotations

import sglconsole.commands  # noqa: F401 - every subcommand registers itself
from sglconsole.actions.registry import ACTIONS
from sglconsole.commands.registry import COMMANDS
from sglconsole.tui.keys import KEYS
from sglconsole.tui.screens.main import MainScreen


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
    }
