"""A one-line question, e.g. the profile name for capture."""

from __future__ import annotations

from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Input, Static


class AskScreen(ModalScreen[str | None]):
    BINDINGS = [Binding("escape", "cancel", "Cancel", id="ask-cancel")]

    def __init__(self, question: str, default: str = ""):
        super().__init__()
        self.question = question
        self.default = default

    def compose(self):
        with Vertical(id="dialog"):
            yield Static(self.question, id="dialog-title")
            yield Input(value=self.default, id="ask-input")
            yield Static("Enter  ok     Esc  cancel", id="dialog-hint")

    def on_input_submitted(self, event: Input.Submitted) -> None:
        self.dismiss(event.value.strip() or None)

    def action_cancel(self) -> None:
        self.dismiss(None)
