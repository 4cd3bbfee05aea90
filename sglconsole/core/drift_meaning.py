"""Equivalent spellings judged by meaning, not by dest (pure; the flag table comes in as a dict).

A deprecated flag whose SGLang deprecation action names its replacement (`new_flag`) is read in
the replacement's terms: `--disable-cuda-graph` as `--cuda-graph-backend-{decode,prefill}=disabled`,
`--dp-size N --enable-dp-attention` as `--attn-dp-size N` (the help's "instead of" names the
spelling it retires). Where the running server's /server_info lists what it resolved (a flag's
help says which nested field it "folds into"), that judges; each row says which source did.
"""

from __future__ import annotations

import itertools
import re
from dataclasses import dataclass, replace

JUDGES = {
    "parser": "by the host's SGLang parser",
    "server_info": "resolved values in /server_info",
    "deprecation": "by SGLang's deprecation note",
}
_FOLDS = re.compile(r"[Ff]olds into (\w+)((?:\[\w+\]|\.\w+)+)")
_INSTEAD = re.compile(r"instead of (.+?)\.?$")
_MISSING = object()


@dataclass(frozen=True)
class Deprecation:
    flag: str  # the deprecated spelling, --disable-cuda-graph
    dest: str
    default: object
    new_flag: str  # as SGLang writes its replacement
    targets: tuple[tuple[str, object, str | None], ...]  # (dest, literal value, or source dest)
    consumed: tuple[str, ...]  # other dests the retired spelling used (--dp-size)


@dataclass(frozen=True)
class Meaning:
    """What one SGLang release's table says about equivalent spellings."""

    deprecations: tuple[Deprecation, ...] = ()
    folds: tuple[tuple[str, tuple[str, ...]], ...] = ()  # dest -> path in /server_info


def _expand(text: str) -> list[str]:
    """`--a-{x,y}=v` -> [`--a-x=v`, `--a-y=v`]."""
    parts = re.split(r"\{([^}]*)\}", text)
    options = [part.split(",") if index % 2 else [part] for index, part in enumerate(parts)]
    return ["".join(choice) for choice in itertools.product(*options)]


def _targets(action: dict, new_flag: str, by_option: dict[str, dict]) -> list | None:
    """(dest, value, source dest) for each flag of `new_flag`; None where the value is not
    certain (an alias whose values may be spelled otherwise)."""
    words = new_flag.split()
    attributes = (action.get("action_info") or {}).get("attributes") or {}
    out = []
    for index, word in enumerate(words):
        if not word.startswith("--"):
            continue
        following = words[index + 1] if index + 1 < len(words) else ""
        for spelled in _expand(word):
            flag, has_value, literal = spelled.partition("=")
            target = by_option.get(flag)
            if target is None:
                return None
            if has_value:
                value = int(literal) if target.get("type") == "int" else literal
                out.append((target["dest"], value, None))
            elif following.startswith("<") and following.endswith(">"):
                source = by_option.get("--" + following.strip("<>"))
                if source is None:
                    return None
                out.append((target["dest"], None, source["dest"]))
            elif "const_value" in attributes:
                out.append((target["dest"], attributes["const_value"], None))
            elif action.get("nargs") == 0 and target.get("kind") == "store_true":
                out.append((target["dest"], True, None))
            else:
                return None
    return out


def meaning_of(table: dict | None) -> Meaning:
    if not table:
        return Meaning()
    actions = table.get("actions") or []
    by_option = {option: action for action in actions for option in action["option_strings"]}
    deprecations = {}
    for action in actions:
        new_flag = ((action.get("action_info") or {}).get("attributes") or {}).get("new_flag")
        if not new_flag or not action.get("kind", "").startswith("custom:Deprecated"):
            continue
        targets = _targets(action, new_flag, by_option)
        if not targets or any(dest == action["dest"] for dest, _, _ in targets):
            continue  # an alias storing into its replacement's dest: the parser already agrees
        retired = _INSTEAD.search(action.get("help") or "")
        consumed = tuple(
            by_option[word]["dest"]
            for word in (retired.group(1).split() if retired else ())
            if word in by_option and word not in action["option_strings"]
        )
        deprecations[action["dest"]] = Deprecation(
            action["option_strings"][0],
            action["dest"],
            action.get("default"),
            new_flag,
            tuple(targets),
            consumed,
        )
    folds = []
    for action in actions:
        found = _FOLDS.search(action.get("help") or "")
        if found:
            path = (found.group(1), *re.findall(r"\w+", found.group(2)))
            folds.append((action["dest"], path))
    return Meaning(tuple(deprecations.values()), tuple(folds))


def translate(
    values: dict, given: set[str], meaning: Meaning, defaults: dict
) -> tuple[dict, set[str], dict[str, tuple[str, str]]]:
    """One side in its replacements' terms: (values, given, {dest: (how it was read, its role:
    "own" the deprecated flag's dest, "consumed" another dest of the retired spelling, "target"
    a replacement's)}). An explicit replacement wins over the deprecated spelling (as SGLang
    resolves both)."""
    values, given, notes = dict(values), set(given), {}
    for dep in meaning.deprecations:
        if dep.dest not in given or not values.get(dep.dest):
            continue
        how = f"{dep.flag} read as {dep.new_flag}"
        explicit = set(given)
        for dest, value, source in dep.targets:
            if dest in explicit:
                continue
            values[dest] = values.get(source) if source else value
            given.add(dest)
            notes[dest] = (how, "target")
        for dest in dep.consumed:
            values[dest] = defaults.get(dest)
            given.discard(dest)
            notes[dest] = (how, "consumed")
        values[dep.dest] = defaults.get(dep.dest, dep.default)
        given.discard(dep.dest)
        notes[dep.dest] = (how, "own")
    return values, given, notes


def resolved_view(info: dict | None, meaning: Meaning) -> dict | None:
    """/server_info with each folded flag's dest answered by the nested field it folds into."""
    if info is None:
        return None
    view = dict(info)
    for dest, path in meaning.folds:
        value = info
        for key in path:
            value = value.get(key, _MISSING) if isinstance(value, dict) else _MISSING
        if value is not _MISSING:
            view[dest] = value
    return view


def judge(
    rows: list, notes: dict[str, tuple[str, str]], resolved: dict | None, same, given: tuple
) -> list:
    """Rows a deprecated spelling touched, judged again: the deprecated flag itself by SGLang's
    deprecation note (its replacement carries the meaning; /server_info may keep the old field
    for old clients: 0.5.23 lists enable_dp_attention as attn_dp_size > 1); the others by the
    value /server_info lists where it does, else by the note. `given`: each side's values as
    its parser read them, shown where the deprecated spelling was set aside."""
    out = []
    for row in rows:
        if row.name not in notes:
            out.append(row)
            continue
        how, role = notes[row.name]
        state, judged, meant = row.state, "deprecation", row.profile
        if role != "target":
            row = replace(row, profile=given[0].get(row.name), running=given[1].get(row.name))
        if role == "own":
            state = type(state).SAME
        elif resolved and row.name in resolved:
            judged = "server_info"
            if same(meant, resolved[row.name]):
                state = type(state).SAME
            elif state == type(state).SAME:
                state = type(state).DIFFERENT
        out.append(replace(row, state=state, judged=judged, meaning=how))
    return out


def meaning_lines(rows: list) -> list[str]:
    """One line per deprecated spelling read by meaning: which rows it touched, their verdict
    and which source judged each."""
    by_note: dict[str, list] = {}
    for row in rows:
        if row.meaning:
            by_note.setdefault(row.meaning, []).append(row)
    lines = []
    for note, touched in by_note.items():
        verdicts = "; ".join(
            f"{row.flag}: "
            + ("same meaning" if row.state.value == "SAME" else row.state.label)
            + f" ({JUDGES[row.judged]})"
            for row in touched
        )
        lines.append(f"{note} (SGLang's deprecation note): {verdicts}")
    return lines
