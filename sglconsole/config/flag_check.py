"""Profile args that SGLang's own parser would refuse, found offline by `check` from the shipped
flag tables: a misspelled flag (no shipped version knows it, neither whole nor as a prefix), with
the nearest real flag, and a prefix argparse cannot resolve on a version the profile may run on
(`--cuda-graph-max-bs` on 0.5.23), with its candidates. A flag any shipped version takes passes:
only the host's own SGLang says what it accepts (preflight)."""

from __future__ import annotations

import difflib
from functools import cache

from sglconsole.config.flag_history import removed_flag, removed_value
from sglconsole.config.flag_tables import available_versions, load_table
from sglconsole.config.problems import Path_, dotted, lookup_line

# the newest table stands for the releases after it too: this many patch releases are tried
# against a profile's requires_sglang when deciding whether that table applies
NEWEST_TABLE_SPAN = 50


@cache
def version_flags(version: str) -> frozenset[str]:
    """The `--` option strings of one shipped table."""
    actions = load_table(version)["actions"]
    options = (option for action in actions for option in action["option_strings"])
    return frozenset(option for option in options if option.startswith("--"))


@cache
def known_flags() -> frozenset[str]:
    """Every option string of every shipped table."""
    return frozenset().union(*(version_flags(version) for version in available_versions()))


def _flag_of(arg: str) -> str | None:
    if not arg.startswith("--") or arg == "--":
        return None
    return arg.split("=", 1)[0]


def unknown_flag(arg: str) -> str | None:
    """The flag of `arg` when no shipped SGLang accepts it, neither whole nor as a prefix."""
    flag = _flag_of(arg)
    if flag is None:
        return None
    known = known_flags()
    if flag in known or any(option.startswith(flag) for option in known):
        return None
    return flag


def ambiguous_candidates(flag: str, version: str) -> tuple[str, ...]:
    """The flags `flag` could abbreviate on `version` when argparse cannot choose (two or more,
    and `flag` itself is none of them: argparse takes an exact match first); else ()."""
    options = version_flags(version)
    if flag in options:
        return ()
    matches = tuple(sorted(option for option in options if option.startswith(flag)))
    return matches if len(matches) > 1 else ()


def tables_for(requires: object) -> list[str]:
    """The shipped tables a profile may run on: those whose releases (up to the next table's)
    meet its requires_sglang; all of them when it has none (or one check reports elsewhere)."""
    from packaging.specifiers import InvalidSpecifier, SpecifierSet  # only a profile's requires

    versions = available_versions()
    try:
        spec = SpecifierSet(str(requires)) if requires is not None else None
    except InvalidSpecifier:
        spec = None
    if spec is None:
        return versions
    chosen = []
    for index, version in enumerate(versions):
        following = versions[index + 1] if index + 1 < len(versions) else None
        releases = _releases(version, following)
        if any(spec.contains(release, prereleases=True) for release in releases):
            chosen.append(version)
    return chosen


def _releases(version: str, following: str | None) -> list[str]:
    """`version` and the patch releases after it that its table stands for."""
    from packaging.version import InvalidVersion, Version

    try:
        first = Version(version)
        last = Version(following) if following else None
    except InvalidVersion:
        return [version]
    major, minor = first.release[0], first.release[1] if len(first.release) > 1 else 0
    if last is not None and last.release[:2] == (major, minor):
        end = last.release[2] if len(last.release) > 2 else 0
    else:
        end = first.micro + NEWEST_TABLE_SPAN
    return [version] + [f"{major}.{minor}.{patch}" for patch in range(first.micro + 1, end)]


def flag_problems(profiles: object, lines: dict[Path_, int], filename: str) -> list[str]:
    """`file:line: profiles.P.args[i]: problem` for each unknown or ambiguous flag; `profiles` as
    written (a raw mapping: this also runs when hosts.yaml is otherwise invalid)."""
    if not isinstance(profiles, dict):
        return []
    versions = available_versions()
    span = f"{versions[0]}-{versions[-1]}" if len(versions) > 1 else versions[0]
    problems = []
    for name, profile in profiles.items():
        raw = profile if isinstance(profile, dict) else {}
        args = raw.get("args")
        tables = tables_for(raw.get("requires_sglang"))
        for index, arg in enumerate(args if isinstance(args, list) else []):
            flag = _flag_of(arg) if isinstance(arg, str) else None
            if flag is None:
                continue
            loc = ("profiles", name, "args", index)
            where = f"{filename}:{lookup_line(loc, lines)}: {dotted(loc)}"
            if unknown_flag(flag) is not None:
                close = difflib.get_close_matches(flag, known_flags(), n=1, cutoff=0.6)
                hint = f"; did you mean {close[0]}?" if close else ""
                problems.append(
                    f"{where}: {flag} is not a flag of any shipped SGLang table ({span}){hint}"
                )
                continue
            problems.extend(f"{where}: {text}" for text in _ambiguity(flag, tables))
            if raw.get("requires_sglang") is not None:  # pinned: its releases' tables judge
                value = _value_of(args, index)
                problems.extend(f"{where}: {text}" for text in _removed(flag, value, tables))
    return problems


def _value_of(args: list, index: int) -> str | None:
    arg = args[index]
    if "=" in arg:
        return arg.split("=", 1)[1]
    following = args[index + 1] if index + 1 < len(args) else None
    return following if isinstance(following, str) and not following.startswith("--") else None


@cache
def _choices(version: str) -> dict[str, tuple[str, ...]]:
    return {
        option: tuple(action["choices"])
        for action in load_table(version)["actions"]
        if action.get("choices")
        for option in action["option_strings"]
    }


def _removed(flag: str, value: str | None, tables: list[str]) -> list[str]:
    """For a profile pinned to releases that dropped `flag` (neither whole nor as a prefix) or
    the value it gives: which release removed it and SGLang's replacement (from the tables)."""
    for version in tables:
        options = version_flags(version)
        if flag not in options and not any(option.startswith(flag) for option in options):
            removal = removed_flag(flag, version)
            if removal is not None:
                return [f"{flag} is not a flag of SGLang {version}: {removal.sentence()}"]
        choices = _choices(version).get(flag)
        if value is not None and choices and value not in choices:
            removal = removed_value(flag, value, version)
            if removal is not None:
                return [f"{flag} {value}: not a choice on SGLang {version}: {removal.sentence()}"]
    return []


def _ambiguity(flag: str, tables: list[str]) -> list[str]:
    """One sentence per set of candidates, naming the versions where argparse refuses `flag`."""
    by_candidates: dict[tuple[str, ...], list[str]] = {}
    for version in tables:
        candidates = ambiguous_candidates(flag, version)
        if candidates:
            by_candidates.setdefault(candidates, []).append(version)
    return [
        f"{flag} is ambiguous on SGLang {', '.join(versions)} (its argparse refuses it: could be "
        f"{' or '.join(candidates)}); write the whole flag (or a requires_sglang that excludes it)"
        + _why(flag, versions[0])
        for candidates, versions in by_candidates.items()
    ]


def _why(flag: str, version: str) -> str:
    removal = removed_flag(flag, version)
    return f"; {removal.sentence()}" if removal is not None else ""
