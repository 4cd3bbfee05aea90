"""When each server was last restored, as this machine's audit log says (the consoles run here
write it: actions.audit). Read again only when the file changed."""

from __future__ import annotations

from datetime import datetime

from sglconsole.actions.audit import AuditLog, of_fleet

TIME_FORMAT = "%Y-%m-%dT%H:%M:%S%z"


class RestoreTimes:
    def __init__(self, audit: AuditLog | None = None, fleet: str | None = None):
        self.audit = audit or AuditLog()
        self.fleet = fleet
        """The config identity of the fleet watched: another fleet's ct129 is not this one's."""
        self._stamp: tuple[int, int] | None = None
        self._times: dict[tuple[str, int], float] = {}

    def __call__(self) -> dict[tuple[str, int], float]:
        try:
            stat = self.audit.path.stat()
        except OSError:
            return {}
        stamp = (stat.st_mtime_ns, stat.st_size)
        if stamp != self._stamp:
            actions = of_fleet(self.audit.actions(), self.fleet)
            self._stamp, self._times = stamp, last_restores(actions)
        return self._times


def last_restores(actions: list[dict]) -> dict[tuple[str, int], float]:
    """(host, port) -> when its newest restore that ended well ended (epoch seconds)."""
    found: dict[tuple[str, int], float] = {}
    for record in actions:
        if record.get("action") != "restore" or record.get("ok") is not True:
            continue
        host, port, ended = record.get("host"), record.get("port"), record.get("end_time")
        if not isinstance(host, str) or not isinstance(port, int) or not isinstance(ended, str):
            continue
        try:
            when = datetime.strptime(ended, TIME_FORMAT).timestamp()
        except ValueError:
            continue
        key = (host, port)
        found[key] = max(when, found.get(key, when))
    return found
