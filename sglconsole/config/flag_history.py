"""Why a host's SGLang refuses a flag or a value that an older release took, read from the shipped
flag tables: the release that removed it (the first table, in version order, without it after one
with it; exact once every release has a table) and the replacement SGLang itself named (its
deprecation action's `new_flag`, else its deprecation help text). Only where no table says a
replacement, HAND_KEPT (marked so) does."""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache

from sglconsole.config.flag_tables import available_versions, load_table
from sglconsole.core.flag_table import version_key

# Replacements no shipped table names, said as "hand-kept in sglconsole" where used. Empty: every
# removal in the reference's list (§b1) that has a replacement has it in a table's deprecation
# action or help text.
HAND_KEPT: dict[str, str] = {}

_USE = re.compile(r"(?i)\buse\s+(.+?)(?:\s+instead\b|\)|\.(?:\s|$)|$)")
_ALIAS = re.compile(r"(?i)\balias for\s+(--[\w-]+(?:[= ][\w{},<>-]+)?)")


@dataclass(frozen=True)
class Removal:
    subject: str  # "`--x`" or "value 'v' of `--x`"
    last_in: str
    removed_in: str
    exact: bool  # no release between the two tables
    replacement: str | None = None
    source: str | None = None  # where the replacement was read

    def sentence(self) -> str:
        when = (
            f"removed in SGLang {self.removed_in} (last in {self.last_in})"
            if self.exact
            else f"removed in SGLang {_between(self.last_in, self.removed_in)} (last in "
            f"{self.last_in}; the releases between have no flag table here)"
        )
        text = f"{self.subject} was {when}"
        if self.replacement:
            text += f"; SGLang's replacement: `{self.replacement}` ({self.source})"
        elif self.source:
            text += f"; {self.source}"
        return text


@cache
def _actions_by_option(version: str) -> dict[str, dict]:
    return {
        option: action
        for action in load_table(version)["actions"]
        for option in action["option_strings"]
    }


def _tables_up_to(version: str | None) -> list[str]:
    versions = available_versions()
    if version is None:
        return versions
    return [release for release in versions if version_key(release) <= version_key(version)]


def _between(last_in: str, gone: str) -> str:
    """The releases that may have removed it: 0.5.18-0.5.23 after 0.5.17."""
    last_key, gone_key = version_key(last_in), version_key(gone)
    if len(last_key) >= 3 and last_key[:2] == gone_key[:2]:
        return f"{last_key[0]}.{last_key[1]}.{last_key[2] + 1}-{gone}"
    return f"{gone} or earlier"


def _consecutive(older: str, newer: str) -> bool:
    old, new = version_key(older), version_key(newer)
    return len(old) >= 3 and len(new) >= 3 and old[:2] == new[:2] and new[2] == old[2] + 1


def _last_and_next(has, host_version: str | None) -> tuple[str, str, bool] | None:
    """(last table with it, first table after without it, exact) over the tables up to the
    host's version; the host's version stands in when no table after says it is gone."""
    tables = _tables_up_to(host_version)
    last = None
    for index, version in enumerate(tables):
        if has(version):
            last = index
    if last is None:
        return None
    if last + 1 < len(tables):
        gone = tables[last + 1]
    elif host_version and version_key(host_version) > version_key(tables[last]):
        gone = host_version
    else:
        return None
    return tables[last], gone, _consecutive(tables[last], gone)


def _replacement(flag: str, last_in: str) -> tuple[str | None, str | None]:
    """SGLang's own word on `flag`: (replacement, where read) from the newest table that has
    it, its deprecation action first, then its help text; else the hand-kept map."""
    for version in reversed(_tables_up_to(last_in)):
        action = _actions_by_option(version).get(flag)
        if action is None:
            continue
        attributes = (action.get("action_info") or {}).get("attributes") or {}
        if attributes.get("new_flag"):
            return attributes["new_flag"], f"its deprecation action in SGLang {version}"
        text = action.get("help") or ""
        if "deprecat" in text.lower() or "alias" in text.lower():
            found = _ALIAS.search(text) or _USE.search(text)
            if found and _names_flags(found.group(1).strip(" .,")):
                return found.group(1).strip(" .,"), f"its deprecation note in SGLang {version}"
            return None, f"SGLang {version}'s note: {text.strip()}"
        break
    if flag in HAND_KEPT:
        return HAND_KEPT[flag], "hand-kept in sglconsole: no SGLang table names it"
    return None, None


_SPELLING = re.compile(
    r"^(--[\w{},=<>.-]+|[A-Z][A-Z0-9_]*(=\S+)?|and|or|<[\w-]+>|\{[\w,.-]+\}|[\w.-]+=\S+)$"
)


def _names_flags(text: str) -> bool:
    """A replacement spelled as flags or variables (else the note is quoted whole)."""
    words = text.split()
    return (
        bool(words)
        and all(_SPELLING.match(word) for word in words)
        and words[0][0] in "-ABCDEFGHIJKLMNOPQRSTUVWXYZ"
    )


def removed_flag(flag: str, host_version: str | None) -> Removal | None:
    """When and how `flag` went (None: no table up to the host's version ever had it)."""
    span = _last_and_next(lambda version: flag in _actions_by_option(version), host_version)
    if span is None:
        return None
    last_in, gone, exact = span
    replacement, source = _replacement(flag, last_in)
    return Removal(f"`{flag}`", last_in, gone, exact, replacement, source)


def removed_value(flag: str, value: str, host_version: str | None) -> Removal | None:
    """When a choice of `flag` went, and what SGLang's own type check says of it."""

    def has(version: str) -> bool:
        action = _actions_by_option(version).get(flag)
        return bool(action and value in (action.get("choices") or ()))

    span = _last_and_next(has, host_version)
    if span is None:
        return None
    last_in, gone, exact = span
    now = _actions_by_option(gone).get(flag) if gone in available_versions() else None
    probe = (((now or {}).get("type_info") or {}).get("probes") or {}).get(value) or {}
    said = probe.get("error", "").split(": ", 1)[-1] or None
    return Removal(
        f"value '{value}' of `{flag}`",
        last_in,
        gone,
        exact,
        None,
        f"SGLang {gone} says: {said}" if said else None,
    )


_UNRECOGNIZED = re.compile(r"unrecognized arguments: (.+)")
_AMBIGUOUS = re.compile(r"ambiguous option: (--[\w-]+)(?:=\S*)? could match (.+)")
_ARGUMENT = re.compile(r"argument ([-\w/]+): (?:invalid choice: '([^']*)'|(\S+) was removed)")


def explain(error: str, host_version: str | None) -> list[str]:
    """One sentence per flag or value in an argparse error that an older SGLang took."""
    notes: list[str] = []
    for line in error.splitlines():
        found = _UNRECOGNIZED.search(line)
        if found:
            for token in found.group(1).split():
                if token.startswith("--"):
                    removal = removed_flag(token.split("=", 1)[0], host_version)
                    if removal:
                        notes.append(removal.sentence())
        found = _AMBIGUOUS.search(line)
        if found:
            removal = removed_flag(found.group(1), host_version)
            if removal:
                where = host_version or removal.removed_in  # the host's release is the one refusing
                notes.append(
                    removal.sentence() + f"; on {where} it only abbreviates "
                    f"{found.group(2).strip()}, which argparse refuses"
                )
        found = _ARGUMENT.search(line)
        if found:
            value = found.group(2) if found.group(2) is not None else found.group(3)
            for flag in found.group(1).split("/"):
                removal = removed_value(flag, value, host_version)
                if removal:
                    notes.append(removal.sentence())
                    break
    return notes
