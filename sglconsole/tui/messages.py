"""Messages from the app's refresh loop to the screen."""

from __future__ import annotations

from textual.message import Message

from sglconsole.tui.coalesce import Key


class FleetChanged(Message):
    """These (host, port|None) changed since the last refresh (at most ~10 a second); none at the
    app's clock tick (TICK_S), which redraws what moves with time."""

    def __init__(self, keys: frozenset[Key]):
        super().__init__()
        self.keys = keys

    def can_replace(self, message: Message) -> bool:
        # Textual asks the older message whether the newer one may replace it: hand over our keys
        if isinstance(message, FleetChanged):
            message.keys = message.keys | self.keys
            return True
        return False
