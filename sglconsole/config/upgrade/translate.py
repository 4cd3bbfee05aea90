"""The one answer to "what is this profile on SGLang X?": its argv option by option (flags),
then what X's ServerArgs requires (requirements), then its environment (envs); each release read
with its own shipped table (pick() says when a neighbour's stands in, and the note says so)."""

from __future__ import annotations

from sglconsole.config.flag_tables import pick
from sglconsole.config.upgrade.envs import carry_env
from sglconsole.config.upgrade.flags import carry
from sglconsole.config.upgrade.options import split
from sglconsole.config.upgrade.record import Translation
from sglconsole.config.upgrade.requirements import require, unread


def translate(
    args: list[str] | tuple[str, ...],
    env: dict[str, str],
    *,
    from_version: str,
    to_version: str,
    arch: str | None,
) -> Translation:
    """`args`/`env` (a profile as it runs on `from_version`) for `to_version`; `arch`: the
    model's architecture (config.json), None when it could not be read."""
    old, new = pick(from_version), pick(to_version)
    notes = [pick_note for pick_note in (old.note, new.note) if pick_note]
    changes = [carry(option, old.version, new.version) for option in split(args, old.version)]
    new_args = tuple(token for change in changes for token in change.new)
    new_env, env_changes, env_notes = carry_env(dict(env), new.version)
    new_args, new_env, required = require(new_args, new_env, new.version, arch)
    notes += env_notes
    missing = unread(new.version)
    if missing:
        notes.append(missing)
    required_env = {
        token.split("=", 1)[0] for change in required if change.variable for token in change.new
    }  # a variable the target requires is said once, by its requirement
    env_changes = [
        change
        for change in env_changes
        if not change.new or change.new[0].split("=", 1)[0] not in required_env
    ]
    return Translation(
        from_version=from_version,
        to_version=to_version,
        old_args=tuple(args),
        old_env=dict(env),
        new_args=new_args,
        new_env=new_env,
        changes=(*changes, *required, *env_changes),
        notes=tuple(notes),
    )
