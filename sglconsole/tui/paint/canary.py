"""The canary in a server's detail view: its verdict and history, each last answer next to the
expected one, and SGLang's own warnings of this lifetime (state.canary)."""

from __future__ import annotations

from rich.text import Text

from sglconsole.core.text import clean, fmt_duration
from sglconsole.state.canary import SIGNALS
from sglconsole.state.fleet import ServerState
from sglconsole.tui.paint.palette import Palette

SIGNAL_WORDS = {
    "kv_canary": "KV canary violations",
    "nan_logits": "NaN in logits",
    "health_check_failed": "Health check failed",
}
HISTORY_SHOWN = 24  # runs in the detail view's pass/fail line


def canary_lines(server: ServerState, palette: Palette, now: float) -> list[Text]:
    """Nothing until the canary has asked (or skipped) this server."""
    log = server.canary
    pid = server.view.pid
    run = log.current(pid)
    lines = []
    if run is not None:
        style = palette.good if run.ok else palette.bad
        head = Text.assemble(("canary ", "bold"), (run.verdict, style))
        head.append(f" {log.marks(pid)[-HISTORY_SHOWN:]}", style=style)
        head.append(f" ({fmt_duration(now - run.time)} ago)", style=palette.muted)
        if run.finding:
            head.append(f" {clean(run.finding)}", style=palette.bad)
        lines.append(head)
        answers = Text("  ")
        for number, answer in enumerate(run.answers):
            said = "(nothing)" if answer.answer is None else repr(answer.answer.strip()[:24])
            good = answer.verdict == "OK"
            answers.append(" · " if number else "", style=palette.muted)
            answers.append(
                f"{answer.prompt} {clean(said)}", style=palette.good if good else palette.bad
            )
            answers.append(f" (expected {answer.expected})", style=palette.muted)
        lines.append(answers)
    if log.skipped is not None:
        when, reason = log.skipped
        lines.append(
            Text(
                f"canary skipped {fmt_duration(now - when)} ago: {clean(reason)}",
                style=palette.warn,
            )
        )
    signals = server.signals.of(pid, server.view.started)
    said = [
        f"{SIGNAL_WORDS[kind]} ×{signals.counts[kind]}, "
        f"last {fmt_duration(now - signals.last_at[kind])} ago"
        for kind in SIGNALS
        if signals.counts.get(kind)
    ]
    if said:
        lines.append(Text("SGLang warned: " + "; ".join(said), style=palette.warn))
    return lines
