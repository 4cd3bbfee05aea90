"""The operator's own console settings, apart from the fleet's hosts.yaml: a colour theme and key
bindings by their binding ids (like k9s's skins and hotkeys), in
$XDG_CONFIG_HOME/sglconsole/console.toml (default ~/.config/sglconsole/console.toml)::

    theme = "light"     # dark, light, ansi, any Textual theme (--theme, TEXTUAL_THEME win)
    [keys]
    kill = "ctrl+x"     # binding id = keys (an unknown id is refused with the list)
"""

from __future__ import annotations

import os
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

from sglconsole.errors import ConfigError

SETTINGS_ENV = "SGLCONSOLE_SETTINGS"


@dataclass(frozen=True)
class ConsoleSettings:
    theme: str | None = None
    keys: dict[str, str] = field(default_factory=dict)
    path: Path | None = None


def settings_path() -> Path:
    if os.environ.get(SETTINGS_ENV):
        return Path(os.environ[SETTINGS_ENV])
    base = os.environ.get("XDG_CONFIG_HOME") or os.path.join(os.path.expanduser("~"), ".config")
    return Path(base) / "sglconsole" / "console.toml"


def load_settings() -> ConsoleSettings:
    """The settings file, or the defaults when there is none; a broken file is an error that names
    it (and the line, for TOML syntax)."""
    path = settings_path()
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return ConsoleSettings()
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{path}: cannot read: {exc}") from None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: {exc}") from None
    unknown = sorted(set(data) - {"theme", "keys"})
    if unknown:
        raise ConfigError(f"{path}: unknown setting {unknown[0]!r} (settings: theme, keys)")
    theme, keys = data.get("theme"), data.get("keys", {})
    if theme is not None and not isinstance(theme, str):
        raise ConfigError(f'{path}: theme: expected a name such as "light", got {theme!r}')
    if not isinstance(keys, dict) or not all(isinstance(binding, str) for binding in keys.values()):
        raise ConfigError(f'{path}: [keys]: expected binding id = "keys" pairs, got {keys!r}')
    return ConsoleSettings(theme, dict(keys), path)
