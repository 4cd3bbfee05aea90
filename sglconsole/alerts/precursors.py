"""Alerts on the signs before an outage (state.precursors): host memory running out, an OOM kill,
a GPU Xid, ECC counters that rose — each for the server it hits (or the host).

None is a status of the server (an UP server can sit on a GPU that logs Xids), so they are
watched apart from the status tracker, like routes. Hysteresis: a sign must be present for
`hold_s` before it is news, and over only once it has been gone for CLEAR_S (a trend that wobbles
around its threshold, which findings() also holds to a looser one once alerted, tells once); its
end is news once, like a recovery.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from sglconsole.state.fleet import FleetState
from sglconsole.state.precursors import findings

CLEAR_S = 120.0
EVERY_S = 1.0  # signs are looked at once a second per host, however often the sweep runs
ALERT_NAMES = {
    "host_memory": "SglconsoleHostMemory",
    "oom_kill": "SglconsoleOomKill",
    "xid": "SglconsoleGpuXid",
    "ecc": "SglconsoleGpuEcc",
}
"""Alertmanager's alertname of each kind of sign."""


@dataclass
class SignWatch:
    clear_s: float = CLEAR_S
    seen: dict[tuple[str, int | None, str], float] = field(default_factory=dict)
    """(host, port, kind) -> since when it is present without a break."""
    told: dict[tuple[str, int | None, str], str] = field(default_factory=dict)
    """(host, port, kind) -> the text alerted, while the sign is not over."""
    gone: dict[tuple[str, int | None, str], float] = field(default_factory=dict)
    """(host, port, kind) alerted -> since when it has been absent."""
    every_s: float = EVERY_S
    looked: dict[str, float] = field(default_factory=dict)
    """host -> when its signs were last looked at."""


def sign_news(fleet: FleetState, watch: SignWatch, hold_s: float, now: float, make_alert) -> list:
    """Alerts (built by `make_alert(host, port, kind, text, on)`) for signs present `hold_s`,
    and for the end of each one alerted."""
    found = []
    for host in fleet.hosts.values():
        if not host.reachable:
            continue  # what cannot be read now is not over: it is unknown
        if now - watch.looked.get(host.name, -watch.every_s) < watch.every_s:
            continue  # sweeps come every second or more often; signs move in seconds
        watch.looked[host.name] = now
        keep = frozenset((kind, port) for name, port, kind in watch.told if name == host.name)
        present = {}
        for sign in findings(host, now, keep):
            present.setdefault((host.name, sign.port, sign.kind), sign.text)
        for key, text in present.items():
            watch.gone.pop(key, None)
            since = watch.seen.setdefault(key, now)
            if key not in watch.told and now - since >= hold_s:
                watch.told[key] = text
                found.append(make_alert(host, key[1], key[2], text, True))
        for key in [key for key in watch.seen if key[0] == host.name and key not in present]:
            del watch.seen[key]
        for key in [key for key in watch.told if key[0] == host.name and key not in present]:
            gone = watch.gone.setdefault(key, now)
            if now - gone >= watch.clear_s:
                text = watch.told.pop(key)
                del watch.gone[key]
                found.append(make_alert(host, key[1], key[2], f"over: {text}", False))
    return found
