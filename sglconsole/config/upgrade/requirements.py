"""What the target release's ServerArgs requires of a launch, from the shipped checks
(sglconsole/data/checks, generated from each release's server_args.py): where a check's
conditions hold on the translated argv (defaults from the target's flag table) for the model's
architecture, its remedy (args and environment) is added, with the error SGLang would raise."""

from __future__ import annotations

import json
from functools import cache
from importlib import resources

from sglconsole.config.upgrade.options import actions, split
from sglconsole.config.upgrade.record import ADDED, KEPT, REFUSED, Change


@cache
def checks(version: str) -> tuple[dict, ...] | None:
    """The checks of exactly `version` (None: sglconsole ships none for it: unknown)."""
    path = resources.files("sglconsole.data").joinpath("checks", f"sglang-{version}.json")
    try:
        return tuple(json.loads(path.read_text(encoding="utf-8"))["checks"])
    except (FileNotFoundError, ValueError, KeyError):
        return None


def resolved(args: tuple[str, ...], version: str) -> dict[str, object]:
    """dest -> value as `version`'s parser leaves it: the argv's values over the defaults."""
    values = {action["dest"]: action.get("default") for action in actions(version).values()}
    for option in split(args, version):
        action = actions(version).get(option.flag or "")
        if action is None:
            continue
        if action.get("nargs") == 0:
            values[action["dest"]] = action.get("const", True)
        else:
            values[action["dest"]] = option.values[0] if len(option.values) == 1 else option.values
    return values


def _holds(condition: dict, values: dict) -> bool:
    value, wanted, test = values.get(condition["field"]), condition["value"], condition["test"]
    return {
        "==": lambda: value == wanted,
        "!=": lambda: value != wanted,
        "in": lambda: value in wanted,
        "not in": lambda: value not in wanted,
        "truthy": lambda: bool(value),
        "falsy": lambda: not value,
    }[test]()


def require(
    args: tuple[str, ...], env: dict[str, str], version: str, arch: str | None
) -> tuple[tuple[str, ...], dict[str, str], list[Change]]:
    """(args, env, changes) with what `version`'s ServerArgs requires added."""
    changes: list[Change] = []
    env = dict(env)
    for check in checks(version) or ():
        if not all(_holds(condition, resolved(args, version)) for condition in check["when"]):
            continue
        error = check["error"].replace("{model_arch}", arch or "<model>")
        said = f"SGLang {version}'s ServerArgs refuses this launch ({check['where']}): {error}"
        if arch is None:
            changes.append(
                Change(kind=REFUSED, reason=f"{said}; it applies to some architectures and the "
                       "model's config.json could not be read")
            )  # fmt: skip
            continue
        if arch not in check["architectures"]:
            continue
        flag, *values = check["remedy"]["args"]
        kept = [option for option in split(args, version) if option.flag != flag]
        args = tuple(token for option in kept for token in option.tokens) + (flag, *values)
        changes.append(Change(kind=ADDED, new=(flag, *values), reason=said))
        asks = f"SGLang {version}'s ServerArgs asks for it with {flag} {' '.join(values)}"
        for name, value in check["remedy"]["env"].items():
            entry = (f"{name}={value}",)
            if env.get(name) == value:
                changes.append(Change(kind=KEPT, old=entry, new=entry, variable=True, reason=asks))
            else:
                env[name] = value
                changes.append(Change(kind=ADDED, new=entry, variable=True, reason=asks))
    return args, env, changes


def unread(version: str) -> str | None:
    """A note when sglconsole has no checks for `version`."""
    if checks(version) is None:
        return f"sglconsole ships no ServerArgs checks for SGLang {version}: none were applied"
    return None
