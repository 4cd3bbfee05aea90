"""A profile's argv as options, read with one release's flag table: each flag (as written, and
the whole flag argparse resolves it to: exact, else a unique prefix) with its values, which are
kept byte-exact. A flag argparse cannot resolve on that release has no whole flag."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache

from sglconsole.config.flag_tables import read


@dataclass(frozen=True)
class Option:
    written: str
    """The flag as the profile writes it (`--speculative-algo`), or a positional argument."""
    flag: str | None
    """The whole flag it is on the release that read it (None: unknown there, or ambiguous)."""
    values: tuple[str, ...] = ()
    inline: bool = False
    """Written `--flag=value` (one token)."""

    @property
    def tokens(self) -> tuple[str, ...]:
        if self.inline:
            return (f"{self.written}={self.values[0]}", *self.values[1:])
        return (self.written, *self.values)

    def spelled(self, flag: str) -> tuple[str, ...]:
        """The same values under another flag, written the same way."""
        if self.inline:
            return (f"{flag}={self.values[0]}", *self.values[1:])
        return (flag, *self.values)


@cache
def actions(version: str) -> dict[str, dict]:
    """Option string -> its action, in the table of exactly `version`."""
    return {
        option: action for action in read(version)["actions"] for option in action["option_strings"]
    }


def candidates(written: str, version: str) -> tuple[str, ...]:
    """The whole flags `written` names on `version`: itself, else every flag it prefixes."""
    table = actions(version)
    if written in table:
        return (written,)
    return tuple(sorted(option for option in table if option.startswith(written)))


def whole(written: str, version: str) -> str | None:
    found = candidates(written, version)
    return found[0] if len(found) == 1 else None


def split(args: list[str] | tuple[str, ...], version: str) -> list[Option]:
    """`args` as options (each `--flag` with the tokens up to the next `--`)."""
    options: list[Option] = []
    for token in args:
        if token.startswith("--") and token != "--":
            written, equals, value = token.partition("=")
            values = (value,) if equals else ()
            options.append(Option(written, whole(written, version), values, bool(equals)))
        elif options and options[-1].written.startswith("--"):
            last = options[-1]
            options[-1] = Option(last.written, last.flag, (*last.values, token), last.inline)
        else:
            options.append(Option(token, None))
    return options
