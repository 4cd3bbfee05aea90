"""Profile args that no shipped SGLang flag table accepts (a misspelled flag), found offline by
`check` with the nearest real flag; a flag any shipped version knows (or a prefix argparse would
take) passes: only the host's own SGLang says what it accepts (preflight)."""

from __future__ import annotations

import difflib
from functools import cache

from sglconsole.config.flag_tables import available_versions, load_table
from sglconsole.config.problems import Path_, dotted, lookup_line


@cache
def known_flags() -> frozenset[str]:
    """Every option string of every shipped table."""
    flags: set[str] = set()
    for version in available_versions():
        for action in load_table(version)["actions"]:
            flags.update(o for o in action["option_strings"] if o.startswith("--"))
    return frozenset(flags)


def unknown_flag(arg: str) -> str | None:
    """The flag of `arg` when no shipped SGLang accepts it, neither whole nor as a prefix."""
    if not arg.startswith("--") or arg == "--":
        return None
    flag = arg.split("=", 1)[0]
    known = known_flags()
    if flag in known or any(option.startswith(flag) for option in known):
        return None
    return flag


def flag_problems(profiles: object, lines: dict[Path_, int], filename: str) -> list[str]:
    """`file:line: profiles.P.args[i]: --flg is not a flag of SGLang ...` for each unknown flag;
    `profiles` as written (a raw mapping: this also runs when hosts.yaml is otherwise invalid)."""
    if not isinstance(profiles, dict):
        return []
    versions = available_versions()
    span = f"{versions[0]}-{versions[-1]}" if len(versions) > 1 else versions[0]
    problems = []
    for name, profile in profiles.items():
        args = profile.get("args") if isinstance(profile, dict) else None
        for index, arg in enumerate(args if isinstance(args, list) else []):
            flag = unknown_flag(arg) if isinstance(arg, str) else None
            if flag is None:
                continue
            close = difflib.get_close_matches(flag, known_flags(), n=1, cutoff=0.6)
            hint = f"; did you mean {close[0]}?" if close else ""
            loc = ("profiles", name, "args", index)
            problems.append(
                f"{filename}:{lookup_line(loc, lines)}: {dotted(loc)}: {flag} is not a flag of "
                f"any shipped SGLang table ({span}){hint}"
            )
    return problems
