"""The action registry, assembled in one place from complete records: the CLI and the TUI read it.

The actions layer declares the actions that change or probe a server (`SERVER_ACTIONS`); the
quick bench lives a layer above them (it runs a bench sweep) and declares its own record, as does
the upgrade (sglconsole.upgrade: a canary and an A/B bench), a layer above that. All
are put together here, explicitly, so the registry holds every action whatever else was
imported: no module registers itself as a side effect of being imported. This module sits in a
layer of its own, between the views (tui, commands) and the bench.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from types import MappingProxyType

from sglconsole.actions.registry import SERVER_ACTIONS, Action, routed
from sglconsole.bench.quick import BENCH
from sglconsole.upgrade.action import UPGRADE


def assemble(actions: Iterable[Action]) -> Mapping[str, Action]:
    """Name -> the action as it runs (routed: sglconsole.actions.registry.routed), in the given
    order (the CLI lists its subcommands so). A name or a key used twice is refused."""
    by_name: dict[str, Action] = {}
    keys: dict[str, str] = {}
    for action in actions:
        if action.name in by_name:
            raise ValueError(f"action {action.name!r} is declared twice")
        if action.key is not None and action.key in keys:
            raise ValueError(f"key {action.key!r} is both {keys[action.key]} and {action.name}")
        if action.key is not None:
            keys[action.key] = action.name
        by_name[action.name] = routed(action)
    return MappingProxyType(by_name)


ACTIONS: Mapping[str, Action] = assemble((*SERVER_ACTIONS, BENCH, UPGRADE))
