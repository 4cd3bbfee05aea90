"""The footer: keys that apply now (greyed when they cannot), the most useful kept when narrow.

Textual's Footer cuts the line at the terminal's edge; at 80 columns that
would hide `?` and `q`, so this bar drops the least useful keys instead.
"""

from __future__ import annotations

from rich.text import Text
from textual.widgets import Static

from sglconsole.tui.keys import FOOTER, KEYS, Key, bound
from sglconsole.tui.widgets.common import palette

LABEL_KEPT = 2
"""Footer ranks up to this keep their label however narrow: help, quit, next problem."""


class KeyBar(Static):
    def on_mount(self) -> None:
        self.screen.bindings_updated_signal.subscribe(self, self._changed)
        self._changed()

    def on_unmount(self) -> None:
        self.screen.bindings_updated_signal.unsubscribe(self)

    def on_resize(self) -> None:
        self._changed()

    def _changed(self, *_) -> None:
        text = self.keys_text()
        if text != self.content:
            self.update(text, layout=False)  # one line, always

    def shown(self) -> list[tuple[Key, bool]]:
        """Footer keys that are not hidden, with whether they can be used now."""
        active = self.screen.active_bindings
        found = []
        for key in KEYS:
            keys = bound(key.binding, getattr(self.app, "keymap", {})).key
            binding = active.get(keys.split(",")[0])
            # the key may be bound to another action here (space folds a host in the tree)
            ours = binding is not None and binding.binding.action == key.binding.action
            if key.binding.action in FOOTER and ours:
                found.append((key, binding.enabled))
        return found

    def keys_text(self) -> Text:
        """Every key that applies, labelled; when narrow, the least useful lose their label first
        (the key stays: `?` says what it does), and only then the least useful keys go."""
        items = self.shown()
        labelled = {key.id for key, _ in items}
        room = self.content_region.width or 80

        def too_wide() -> bool:
            return sum(self._item_width(key, key.id in labelled) for key, _ in items) > room

        by_use = sorted(items, key=lambda item: FOOTER[item[0].binding.action], reverse=True)
        for key, _ in by_use:
            if not too_wide():
                break
            if FOOTER[key.binding.action] > LABEL_KEPT:
                labelled.discard(key.id)
        while items and too_wide():
            items.remove(max(items, key=lambda item: FOOTER[item[0].binding.action]))
        pal = palette(self)
        text = Text()
        for key, enabled in items:
            shown = self.app.get_key_display(key.binding)
            text.append(f" {shown} ", style="reverse bold" if enabled else "dim reverse")
            if key.id in labelled:  # unlabelled keys sit side by side: ` R  r  u `
                text.append(f"{key.binding.description} ", style="" if enabled else pal.muted)
        return text

    def _item_width(self, key: Key, labelled: bool = True) -> int:
        """As drawn: ` ^k Kill ` (the key as shown, not as named: ctrl+k is drawn ^k)."""
        shown = len(self.app.get_key_display(key.binding)) + 2
        return shown + len(key.binding.description) + 1 if labelled else shown
