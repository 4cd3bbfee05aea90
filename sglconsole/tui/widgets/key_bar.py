"""The footer: keys that apply now (greyed when they cannot), the most useful kept when narrow.

Textual's Footer cuts the line at the terminal's edge; at 80 columns that
would hide `?` and `q`, so this bar drops the least useful keys instead.
"""

from __future__ import annotations

from rich.text import Text
from textual.widgets import Static

from sglconsole.tui.keys import FOOTER, KEYS, Key, bound
from sglconsole.tui.widgets.common import palette


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
            if key.binding.action in FOOTER and binding is not None:
                found.append((key, binding.enabled))
        return found

    def keys_text(self) -> Text:
        items = self.shown()
        room = self.content_region.width or 80
        while items and sum(self._item_width(k) for k, _ in items) > room:
            items.remove(max(items, key=lambda item: FOOTER[item[0].binding.action]))
        pal = palette(self)
        text = Text()
        for key, enabled in items:
            shown = self.app.get_key_display(key.binding)
            text.append(f" {shown} ", style="reverse bold" if enabled else "dim reverse")
            text.append(f"{key.binding.description} ", style="" if enabled else pal.muted)
        return text

    def _item_width(self, key: Key) -> int:
        """As drawn: ` ^k Kill ` (the key as shown, not as named: ctrl+k is drawn ^k)."""
        return len(self.app.get_key_display(key.binding)) + len(key.binding.description) + 3
