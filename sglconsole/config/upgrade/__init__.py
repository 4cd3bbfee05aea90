"""A proven profile carried to another SGLang release, offline, from the shipped tables: each
flag to its new spelling (or dropped, or named as what cannot be carried), what the target's
ServerArgs requires added, each environment variable judged by the target's registry; every
change with its reason. `translate()` is the face; the records are in `record`."""

from sglconsole.config.upgrade.record import Change, Translation
from sglconsole.config.upgrade.translate import translate

__all__ = ["Change", "Translation", "translate"]
