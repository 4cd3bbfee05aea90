"""`--record FILE`: the fleet's state changes and parsed samples as JSONL.

Line kinds: `header` (format version, hosts.yaml as loaded), `host`, `server`
and `router` (only the fields that changed), `sample` (a parsed decode line),
`log` (new raw lines), `gone` (an unmanaged server that stopped). Every line
has `t`, the console's clock. Writes go through a thread so a slow disk
never stalls the UI.

Secrets are masked as everywhere else (hosts.yaml's args and env, processes'
argv and env, `--api-key ..` and `api_key='..'` in log lines) and the file is
created 0600: a recording is shared more readily than a hosts.yaml.
"""

from __future__ import annotations

import json
import os
import queue
import stat
import threading
from collections.abc import Callable, Iterable
from pathlib import Path

from sglconsole.core.secrets import mask_text, mask_tree
from sglconsole.state import json_view
from sglconsole.state.fleet import FleetState, ServerState
from sglconsole.tui.coalesce import Key, router_key
from sglconsole.tui.tail import TailCursor

FORMAT = 1


class _Writer(threading.Thread):
    def __init__(self, path: Path):
        super().__init__(name="sglconsole-recorder", daemon=True)
        # 0600 from the start (an existing file is truncated and narrowed too)
        descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        if stat.S_ISREG(os.fstat(descriptor).st_mode):  # never /dev/stdout, a pipe, /dev/null
            os.fchmod(descriptor, 0o600)
        self.file = os.fdopen(descriptor, "w", encoding="utf-8")
        self.lines: queue.SimpleQueue[str | None] = queue.SimpleQueue()

    def run(self) -> None:
        while (line := self.lines.get()) is not None:
            self.file.write(line)
            if self.lines.empty():
                self.file.flush()
        self.file.close()


class Recorder:
    def __init__(self, path: Path, fleet: FleetState, clock: Callable[[], float]):
        self.fleet, self.clock = fleet, clock
        self._last: dict[Key, dict] = {}
        self._cursors: dict[tuple[str, int], tuple[TailCursor, TailCursor]] = {}
        self._writer = _Writer(path)
        self._writer.start()
        config = mask_tree(fleet.config.model.model_dump(mode="json"))
        self._emit({"kind": "header", "format": FORMAT, "config": config})
        self.write((name, None) for name in fleet.hosts)

    def write(self, keys: Iterable[Key]) -> None:
        for host, port in keys:
            state = self.fleet.hosts.get(host)
            if state is None:
                continue
            if port is None:
                self._host(host)
            for server in (
                list(state.servers.values()) if port is None else [state.servers.get(port)]
            ):
                if server is not None:
                    self._server(server)
            self._forget_gone(host)
        for name, router in self.fleet.routers.items():  # few; only what changed is written
            changed = self._changes(router_key(name), json_view.router_record(router))
            if changed:
                self._emit({"kind": "router", "router": name, "set": changed})

    def close(self) -> None:
        self._writer.lines.put(None)
        self._writer.join(timeout=5)

    def _emit(self, event: dict) -> None:
        self._writer.lines.put(
            json.dumps({"t": round(self.clock(), 3), **event}, default=str) + "\n"
        )

    def _changes(self, key: Key, fields: dict) -> dict:
        last = self._last.setdefault(key, {})
        changed = {
            name: value for name, value in fields.items() if last.get(name, object()) != value
        }
        last.update(changed)
        return changed

    def _host(self, host: str) -> None:
        changed = self._changes((host, None), json_view.host_record(self.fleet.hosts[host]))
        if changed:
            self._emit({"kind": "host", "host": host, "set": changed})

    def _server(self, server: ServerState) -> None:
        key = (server.host, server.port)
        changed = self._changes(key, json_view.server_record(server))
        if changed:
            self._emit({"kind": "server", "host": server.host, "port": server.port, "set": changed})
        samples, lines = self._cursors.setdefault(
            key, (TailCursor(server.history), TailCursor(server.log_lines))
        )
        for sample in samples.take():
            self._emit(
                {
                    "kind": "sample",
                    "host": server.host,
                    "port": server.port,
                    **json_view.sample_record(sample),
                }
            )
        new_lines = [mask_text(line) for line in lines.take()]
        if new_lines:
            self._emit(
                {"kind": "log", "host": server.host, "port": server.port, "lines": new_lines}
            )

    def _forget_gone(self, host: str) -> None:
        ports = self.fleet.hosts[host].servers
        for key in [known for known in self._cursors if known[0] == host and known[1] not in ports]:
            del self._cursors[key]
            self._last.pop(key, None)
            self._emit({"kind": "gone", "host": host, "port": key[1]})
