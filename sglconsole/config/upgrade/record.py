"""The records of a translation: one Change per option or variable, kept or changed, with its
reason; a Translation is the old and new profile, the changes and what stops it."""

from __future__ import annotations

from dataclasses import dataclass, field

KEPT, RENAMED, REMOVED, ADDED, REFUSED = "kept", "renamed", "removed", "added", "refused"
"""What happened to an option or variable (REFUSED: cannot be carried; the upgrade stops)."""


@dataclass(frozen=True, kw_only=True)
class Change:
    kind: str
    """KEPT, RENAMED, REMOVED, ADDED or REFUSED."""
    old: tuple[str, ...] = ()
    """The old tokens: a flag and its values, or `NAME=value` of a variable."""
    new: tuple[str, ...] = ()
    reason: str = ""
    variable: bool = False
    """An environment variable, not a flag."""

    def to_dict(self) -> dict:
        return {
            "kind": self.kind,
            "what": "env" if self.variable else "flag",
            "old": list(self.old),
            "new": list(self.new),
            "reason": self.reason,
        }


@dataclass(frozen=True, kw_only=True)
class Translation:
    from_version: str
    to_version: str
    old_args: tuple[str, ...]
    old_env: dict[str, str]
    new_args: tuple[str, ...]
    new_env: dict[str, str]
    changes: tuple[Change, ...]
    notes: tuple[str, ...] = field(default_factory=tuple)
    """Which table judged which release, when not its own; the model's architecture if unread."""

    @property
    def refused(self) -> tuple[Change, ...]:
        return tuple(change for change in self.changes if change.kind == REFUSED)

    @property
    def ok(self) -> bool:
        return not self.refused

    @property
    def changed(self) -> tuple[Change, ...]:
        return tuple(change for change in self.changes if change.kind != KEPT)

    def to_dict(self) -> dict:
        return {
            "from_version": self.from_version,
            "to_version": self.to_version,
            "ok": self.ok,
            "old": {"args": list(self.old_args), "env": dict(self.old_env)},
            "new": {"args": list(self.new_args), "env": dict(self.new_env)},
            "changes": [change.to_dict() for change in self.changes],
            "notes": list(self.notes),
        }
