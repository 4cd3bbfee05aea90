"""The signs before an outage of each host, mapped to the servers they will hit: `signs` holds
what the feeds read and finds the signs (its face, below); `status_json` and `status_schema` are
how `status --json` writes them (imported where used: they read state.model, which holds these)."""

from sglconsole.state.precursors.signs import (
    KIB_PER_MIB,
    RECENT_S,
    Finding,
    HitEvent,
    HostSigns,
    attribute,
    describe,
    ecc_problems,
    findings,
    memory_trend,
    rss_kb,
    rss_trend,
    servers_on,
    take_health,
    take_kernel_event,
    take_memory,
)

__all__ = [
    "KIB_PER_MIB",
    "RECENT_S",
    "Finding",
    "HitEvent",
    "HostSigns",
    "attribute",
    "describe",
    "ecc_problems",
    "findings",
    "memory_trend",
    "rss_kb",
    "rss_trend",
    "servers_on",
    "take_health",
    "take_kernel_event",
    "take_memory",
]
