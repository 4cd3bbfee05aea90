"""Confirmation of a destructive action: exactly what will happen, from the action's own plan."""

from __future__ import annotations

from rich.table import Table
from rich.text import Text
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Button, Static

from sglconsole.actions import Plan
from sglconsole.core.text import clean


def plan_text(plan: Plan) -> Table:
    """One bullet per line of the plan, its warnings first; a wrapped argv stays indented under
    its bullet."""
    table = Table.grid(padding=(0, 1))
    table.add_column(no_wrap=True)
    table.add_column(overflow="fold")
    for warning in plan.warnings:  # what the console knows against it comes first
        table.add_row("!", Text(clean(warning), style="bold yellow"))
    for line in plan.lines:
        table.add_row("•", Text(clean(line)))
    return table


class ConfirmScreen(ModalScreen[bool]):
    """y confirms; n, Escape or the focused Cancel button (the default) leaves everything as it
    is."""

    BINDINGS = [
        Binding("y", "answer(True)", "Yes", id="confirm-yes"),
        Binding("n,escape", "answer(False)", "No", id="confirm-no"),
    ]

    def __init__(self, plan: Plan):
        super().__init__()
        self.plan = plan

    def compose(self):
        verb = clean(self.plan.action).capitalize()
        with Vertical(id="dialog"):
            yield Static(
                Text(f"{verb} {clean(self.plan.target)}?", style="bold"), id="dialog-title"
            )
            with VerticalScroll(id="dialog-body"):
                yield Static(plan_text(self.plan))
            yield Static("y  confirm     n / Esc  cancel", id="dialog-hint")
            with Horizontal(id="dialog-buttons"):
                yield Button(f"{verb} (y)", variant="error", id="yes")
                yield Button("Cancel (n)", variant="primary", id="no")

    def on_mount(self) -> None:
        self.query_one("#no", Button).focus()

    def action_answer(self, yes: bool) -> None:
        self.dismiss(yes)

    def on_button_pressed(self, event: Button.Pressed) -> None:
        self.dismiss(event.button.id == "yes")
