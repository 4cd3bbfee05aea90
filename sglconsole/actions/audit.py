"""The audit log and the rollback store: nothing an operator ran is ever lost.

$XDG_STATE_HOME/sglconsole/actions.jsonl gets a "begin" record before an
action touches a host and an "end" record (the whole record again, with its
outcome) afterwards; an action interrupted midway leaves its "begin" behind.
rollback/HOST_PORT.json keeps what was running before each kill. Both are
created 0600: they can hold secrets (masked when shown).
"""

from __future__ import annotations

import getpass
import json
import os
import socket
import time
import uuid
from datetime import datetime
from pathlib import Path

from sglconsole.config.paths import state_dir
from sglconsole.core.secrets import mask_argv, mask_env
from sglconsole.state.model import OperatorStop

TIME_FORMAT = "%Y-%m-%dT%H:%M:%S%z"
LAUNCH_OR_STOP = ("kill", "relaunch", "restore", "rollback")
"""The actions after which a server runs (or not) because an operator said so."""


def _append_private(path: Path, line: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    descriptor = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
    try:
        os.write(descriptor, (line + "\n").encode())
    finally:
        os.close(descriptor)


def _write_private(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    tmp = path.with_suffix(path.suffix + f".{os.getpid()}.tmp")
    descriptor = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        os.write(descriptor, text.encode())
    finally:
        os.close(descriptor)
    os.replace(tmp, path)


class AuditLog:
    def __init__(self, path: Path | None = None):
        self.path = path or state_dir() / "actions.jsonl"

    def begin(self, action: str, host: str, port: int | None, **details) -> dict:
        record = {
            "id": uuid.uuid4().hex[:12],
            "time": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
            "user": _user(),
            "console_host": socket.gethostname(),
            "host": host,
            "port": port,
            "action": action,
            "phase": "begin",
            "outcome": "started",
            **_masked(details),
        }
        _append_private(self.path, json.dumps(record, default=str))
        return record

    def end(self, record: dict, passed: bool, outcome: str, **details) -> None:
        final = {
            **record,
            **_masked(details),
            "phase": "end",
            "ok": passed,
            "outcome": outcome,
            "end_time": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
        }
        _append_private(self.path, json.dumps(final, default=str))

    def records(self) -> list[dict]:
        try:
            lines = self.path.read_text().splitlines()
        except FileNotFoundError:
            return []
        out = []
        for line in lines:
            try:
                out.append(json.loads(line))
            except ValueError:
                continue
        return out

    def recent(
        self, limit: int = 20, tail_bytes: int = 262144, fleet: str | None = None
    ) -> list[dict]:
        """The last LIMIT actions, newest first, one record each (as `actions`), read from the
        file's last TAIL_BYTES only: it grows for ever, and a console reads it often. FLEET: only
        that fleet's (`of_fleet`)."""
        try:
            with self.path.open("rb") as file:
                size = file.seek(0, os.SEEK_END)
                file.seek(max(0, size - tail_bytes))
                lines = file.read().decode(errors="replace").splitlines()
        except FileNotFoundError:
            return []
        if size > tail_bytes:
            lines = lines[1:]  # the first may be cut
        merged: dict[str, dict] = {}
        for line in lines:
            try:
                record = json.loads(line)
            except ValueError:
                continue
            if isinstance(record, dict):
                merged[record.get("id", "")] = record
        return of_fleet(list(reversed(merged.values())), fleet)[:limit]

    def actions(self) -> list[dict]:
        """One record per action: its end record, or its begin record if it never ended
        (interrupted)."""
        merged: dict[str, dict] = {}
        for record in self.records():
            merged[record.get("id", "")] = record
        return list(merged.values())


class AuditStops:
    """(host, port) -> the operator's kill when it is the server's last launch-or-stop action (a
    StopLookup for the fleet state); the file is read again only when it changed."""

    def __init__(self, audit: AuditLog | None = None):
        self.audit = audit or AuditLog()
        self._stamp: tuple[int, int] | None = None
        self._stops: dict[tuple[str, int], OperatorStop] = {}

    def __call__(self, host: str, port: int) -> OperatorStop | None:
        try:
            stat = self.audit.path.stat()
            stamp = (stat.st_mtime_ns, stat.st_size)
        except OSError:
            return None
        if stamp != self._stamp:
            self._stamp, self._stops = stamp, last_stops(self.audit.recent(limit=10_000))
        return self._stops.get((host, port))


def last_stops(actions: list[dict]) -> dict[tuple[str, int], OperatorStop]:
    """From `recent`'s records (newest first): the servers whose newest launch-or-stop action is
    a kill that ended well."""
    found: dict[tuple[str, int], OperatorStop] = {}
    seen: set[tuple[str, int]] = set()
    for record in actions:
        host, port = record.get("host"), record.get("port")
        if record.get("action") not in LAUNCH_OR_STOP or not isinstance(port, int):
            continue
        key = (str(host), port)
        if key in seen:
            continue
        seen.add(key)
        if record.get("action") != "kill" or record.get("ok") is not True:
            continue
        try:
            ended = datetime.strptime(str(record.get("end_time")), TIME_FORMAT).timestamp()
        except ValueError:
            continue
        found[key] = OperatorStop(str(record.get("user") or "?"), "kill", ended)
    return found


def of_fleet(records: list[dict], fleet: str | None) -> list[dict]:
    """The records of the fleet whose config identity is FLEET (config.Config.identity): one
    machine's audit log holds every fleet its consoles ran, and two may have a host of the same
    name (a new demo is not the last one). Records older than the field belong to any fleet."""
    if fleet is None:
        return records
    return [record for record in records if record.get("fleet") in (None, fleet)]


def _user() -> str:
    try:
        return getpass.getuser()
    except (KeyError, OSError):
        return str(os.getuid())


def _masked(details: dict) -> dict:
    out = {}
    for key, value in details.items():
        if key.endswith("argv") and isinstance(value, (list, tuple)):
            out[key] = mask_argv(list(value))
        elif key.endswith("env") and isinstance(value, dict):
            out[key] = mask_env(value)
        else:
            out[key] = value
    return out


class RollbackStore:
    """What was running before each kill, newest last, per HOST:PORT."""

    def __init__(self, folder: Path | None = None):
        self.folder = folder or state_dir() / "rollback"

    def path(self, host: str, port: int) -> Path:
        return self.folder / f"{host}_{port}.json"

    def save(self, host: str, port: int, snapshot: dict) -> None:
        history = self.history(host, port)
        history.append({**snapshot, "saved_at": time.strftime("%Y-%m-%dT%H:%M:%S%z")})
        _write_private(self.path(host, port), json.dumps(history[-20:], indent=1))

    def history(self, host: str, port: int) -> list[dict]:
        try:
            data = json.loads(self.path(host, port).read_text())
        except (OSError, ValueError):
            return []
        return data if isinstance(data, list) else []

    def latest(self, host: str, port: int) -> dict | None:
        history = self.history(host, port)
        return history[-1] if history else None
