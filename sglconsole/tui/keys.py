"""Every key of the main screen, declared once: footer, `?` help and the command palette read this.

`j`/`k` move down/up the fleet as in vim (`J` still goes up, shift reversing as with tab and
n/N); kill is `ctrl+k`, as in k9s, so no vim habit opens a kill dialog. Arrows work as usual.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from textual.binding import Binding

from sglconsole.catalog import ACTIONS


@dataclass(frozen=True)
class Key:
    group: str
    binding: Binding
    footer: int | None = None
    """Rank in the footer (1 = the last to go when the terminal is narrow);
    None: help and palette only."""

    @property
    def id(self) -> str:
        return self.binding.id or self.binding.action

    @property
    def name(self) -> str:
        """The action's name without its arguments: what check_action receives."""
        return self.binding.action.split("(")[0]


def _bind(
    keys: str,
    action: str,
    label: str,
    tip: str,
    *,
    id: str | None = None,
    key_display: str | None = None,
    priority: bool = False,
) -> Binding:
    return Binding(
        keys,
        action,
        label,
        id=id or action,
        tooltip=tip,
        key_display=key_display,
        priority=priority,
    )


def action_name(name: str) -> str:
    """A registry action's name as a Textual action (`router-in` -> `router_in`)."""
    return name.replace("-", "_")


def _act(name: str) -> Binding:
    """An action's key, label and tip, as its record gives them (its id: the registry's name)."""
    action = ACTIONS[name]
    return _bind(action.key, action_name(name), action.label, action.tip, id=name)


def bound(binding: Binding, keymap: dict[str, str]) -> Binding:
    """The binding with the keys the operator's settings give its id (Textual's keymap)."""
    keys = keymap.get(binding.id or "")
    return binding if keys is None else dataclasses.replace(binding, key=keys)


FIX, LOOK, MOVE, CONSOLE = "Fix a server", "Look closer", "Move", "Console"
REPLAY = "Replay (a recording only)"

KEYS: list[Key] = [
    Key(FIX, _act("restore"), 3),
    Key(FIX, _act("relaunch"), 9),
    Key(FIX, _act("kill"), 6),
    Key(FIX, _act("rollback"), 8),
    Key(FIX, _act("capture"), 14),
    Key(FIX, _act("router-in")),
    Key(FIX, _act("upgrade")),
    Key(LOOK, _act("probe"), 7),
    Key(LOOK, _act("bench")),
    Key(
        LOOK,
        _bind("d", "diff", "Diff", "the running config next to the profile, differences first"),
        4,
    ),
    Key(LOOK, _bind("l", "log", "Log", "live tail of the server's log"), 5),
    Key(LOOK, _bind("g", "gpus", "GPUs", "the host's GPUs and who holds them"), 13),
    Key(
        LOOK,
        _bind(
            "slash",
            "filter",
            "Filter",
            "filter the log (Enter keeps it, Escape clears it)",
            key_display="/",
        ),
        12,
    ),
    Key(
        LOOK, _bind("f", "follow", "Follow/pause", "pause the log where it is, or follow it again")
    ),
    Key(
        LOOK,
        _bind(
            "v",
            "verbatim",
            "Raw lines",
            "show the log as SGLang wrote it, or condensed (decode lines, status polls)",
        ),
    ),
    Key(
        LOOK,
        _bind("a", "activity", "Activity", "what was done this session: actions, results, alerts"),
        11,
    ),
    Key(
        MOVE,
        _bind(
            "n",
            "problem(1)",
            "Next problem",
            "jump to the next host or server that is not UP",
            id="next-problem",
        ),
        2,
    ),
    Key(
        MOVE,
        _bind(
            "N",
            "problem(-1)",
            "Prev problem",
            "jump to the previous host or server that is not UP",
            id="previous-problem",
        ),
    ),
    Key(
        MOVE,
        _bind("j,down", "move(1)", "Down", "next line of the fleet", id="down", key_display="j/↓"),
    ),
    Key(
        MOVE,
        _bind("k,J,up", "move(-1)", "Up", "previous line of the fleet", id="up", key_display="k/↑"),
    ),
    Key(
        MOVE,
        _bind(
            "escape",
            "close",
            "Close",
            "close the progress panel or the log filter",
            key_display="esc",
        ),
        10,
    ),
    Key(
        CONSOLE,
        _bind(
            "backslash",
            "fleet_pane",
            "Fleet pane",
            "hide or show the fleet tree: the detail gets the whole width (j/k still move)",
            key_display="\\",
        ),
    ),
    Key(
        CONSOLE,
        _bind(
            "L",
            "lock",
            "Read-only",
            "hide every action that changes a host (asks first: cannot be undone)",
        ),
        15,
    ),
    # replay keys: shown only in a replay; space before the tree's own (it folds a host there)
    Key(
        REPLAY,
        _bind(
            "space",
            "replay_pause",
            "Pause/play",
            "pause the recording where it is, or play it on",
            key_display="space",
            priority=True,
        ),
        12,
    ),
    Key(
        REPLAY,
        _bind(
            "left_square_bracket",
            "replay_seek(-10)",
            "-10s",
            "go back 10 s in the recording",
            id="replay-back",
            key_display="[",
        ),
        16,
    ),
    Key(
        REPLAY,
        _bind(
            "right_square_bracket",
            "replay_seek(10)",
            "+10s",
            "go on 10 s in the recording (its alerts are told on the way)",
            id="replay-on",
            key_display="]",
        ),
        17,
    ),
    Key(CONSOLE, _bind("B", "bell", "Bell", "ring the terminal bell on alerts (on/off)")),
    Key(
        CONSOLE,
        _bind(
            "question_mark", "help", "Help", "every key, what the statuses mean", key_display="?"
        ),
        1,
    ),
    Key(
        CONSOLE, _bind("q", "quit", "Quit", "leave the console (running actions are cancelled)"), 1
    ),
]

BINDINGS = [key.binding for key in KEYS]
FOOTER = {key.binding.action: key.footer for key in KEYS if key.footer is not None}


def clashes(keymap: dict[str, str]) -> list[tuple[str, str, str]]:
    """(key, first id, second id) for each key that two bindings would answer once the operator's
    keymap is applied: Textual would silently let one of them win, so the settings are refused."""
    owner: dict[str, str] = {}
    found: list[tuple[str, str, str]] = []
    for key in KEYS:
        for name in bound(key.binding, keymap).key.split(","):
            name = name.strip()
            if name in owner and owner[name] != key.id:
                found.append((name, owner[name], key.id))
            owner.setdefault(name, key.id)
    return found
