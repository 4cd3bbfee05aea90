"""A log line into the server's state: the tail the console shows, the log's current writer, and
what the parsed line says (decode sample, ready, startup milestone, error). One path for the
watcher's tail and the journal alike."""

from __future__ import annotations

from sglconsole.core.sglang_log import parse_line
from sglconsole.core.sglang_log.record import LogRecord
from sglconsole.core.sglang_log.signals import signal_of
from sglconsole.state.fleet import record_decode
from sglconsole.state.model import ServerState


def take_line(
    server: ServerState, text: str, now: float, writer: int | None = None
) -> LogRecord | None:
    """`writer`: the pid that wrote the line when the reader knows it otherwise (a container's
    log, read one start at a time, is its main process's, whatever pid SGLang printed from
    inside its own PID namespace)."""
    server.log_lines.append(text)
    server.log_pid = server.log_owner.feed(text)
    if writer is not None:
        server.log_pid = writer
    signal = signal_of(text)
    record = parse_line(text)
    if signal is not None:  # SGLang's own warnings, counted per lifetime (state.canary)
        when = record.time.timestamp() if record is not None and record.time else now
        server.signals.feed(signal[0], when, server.log_pid, signal[1])
    if record is None:
        return None
    if record.time is not None:
        server.written_at = record.time.timestamp()
    # a line without its own time follows one that has it (a traceback after its error line)
    written = server.written_at if server.written_at is not None else now
    stamp = record.time.timestamp() if record.time else now
    if record.kind in ("decode", "prefill"):
        server.batch_at = (stamp, server.log_pid)
    if record.kind == "decode":
        record_decode(server, record, now)
    elif record.kind == "ready":
        server.ready_seen_at = record.time.timestamp() if record.time else now
    elif record.kind == "milestone":
        server.milestones.append((now, record.message or record.milestone or ""))
    elif record.kind == "error" and record.error == "health_check":
        server.health_warnings.append((stamp, server.log_pid))
    elif record.kind == "error":
        # when SGLang wrote it (a tail read at connect holds old errors, a stop's traceback is
        # read a poll or a console later than it was written)
        server.errors.append((written, record.message or ""))
    return record
