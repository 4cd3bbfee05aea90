"""One option of a profile carried from one release's flag table to another's: kept, respelled
(a deprecation action's `new_flag`, or the replacement a removed flag's last release named),
dropped with the release that removed it, or refused with the reason. Values stay byte-exact."""

from __future__ import annotations

import re

from sglconsole.config.flag_history import removed_flag, removed_value
from sglconsole.config.upgrade.options import Option, actions, candidates, whole
from sglconsole.config.upgrade.record import KEPT, REFUSED, REMOVED, RENAMED, Change

_BRACES = re.compile(r"\{([^{}]+)\}")


def expand(template: str) -> list[str]:
    """`--x-{decode,prefill}=disabled` -> both spellings; a template without braces: itself."""
    found = _BRACES.search(template)
    if not found:
        return [template]
    return [
        spelled
        for choice in found.group(1).split(",")
        for spelled in expand(template[: found.start()] + choice.strip() + template[found.end() :])
    ]


def _respelled(option: Option, template: str, new: str) -> tuple[str, ...] | None:
    """The option under the flags `template` names (each a whole flag of `new`), else None."""
    tokens: list[str] = []
    for spelled in expand(template.split()[0] if " " in template else template):
        flag = spelled.split("=", 1)[0]
        if flag not in actions(new):
            return None
        tokens.extend([spelled] if "=" in spelled else option.spelled(flag))
    return tuple(tokens)


def carry(option: Option, old: str, new: str) -> Change:
    if not option.written.startswith("--"):
        return Change(kind=KEPT, old=option.tokens, new=option.tokens, reason="positional")
    flag = option.flag
    if flag is None:
        found = candidates(option.written, old)
        why = f"could be {' or '.join(found)}" if found else "no such flag"
        return Change(
            kind=REFUSED,
            old=option.tokens,
            reason=f"`{option.written}` is not a flag SGLang {old} resolves ({why})",
        )
    action = actions(new).get(flag)
    if action is not None:
        return _present(option, flag, action, old, new)
    return _gone(option, flag, old, new)


def _present(option: Option, flag: str, action: dict, old: str, new: str) -> Change:
    attributes = (action.get("action_info") or {}).get("attributes") or {}
    template = attributes.get("new_flag")
    if template:
        tokens = _respelled(option, template, new)
        if tokens is not None:
            return Change(
                kind=RENAMED,
                old=option.tokens,
                new=tokens,
                reason=f"deprecated in SGLang {new}: its deprecation action names `{template}`",
            )
    choices = action.get("choices") or ()
    for value in option.values:
        if choices and value not in choices:
            removal = removed_value(flag, value, new)
            said = removal.sentence() if removal else f"SGLang {new} takes {', '.join(choices)}"
            return Change(kind=REFUSED, old=option.tokens, reason=said)
    if option.written != flag and whole(option.written, new) != flag:
        others = " or ".join(candidates(option.written, new))
        return Change(
            kind=RENAMED,
            old=option.tokens,
            new=option.spelled(flag),
            reason=f"`{option.written}` abbreviates {flag} on SGLang {old}; on SGLang {new} it "
            f"could be {others}, which argparse refuses: written whole",
        )
    return Change(kind=KEPT, old=option.tokens, new=option.tokens)


def _gone(option: Option, flag: str, old: str, new: str) -> Change:
    removal = removed_flag(flag, new)
    if removal is not None and removal.replacement:
        tokens = _respelled(option, removal.replacement, new)
        if tokens is not None:
            return Change(kind=RENAMED, old=option.tokens, new=tokens, reason=removal.sentence())
    if removal is not None:
        return Change(kind=REMOVED, old=option.tokens, reason=removal.sentence())
    return Change(kind=REFUSED, old=option.tokens, reason=f"`{flag}` is not a flag of SGLang {new}")
