"""Lines a server that has served a while has written since ready (`log_history_lines`)."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

from sglconsole.sim import versiontable
from sglconsole.sim.server import logfmt

if TYPE_CHECKING:
    from sglconsole.sim.server.main import SimServer


def write_history(server: SimServer, count: int) -> None:
    """`log_history_lines`: lines a server that has served a while has written since ready
    (decode lines and uvicorn access lines), so this lifetime's startup sits far back."""
    if count <= 0 or server.engine is None:
        return
    fields = versiontable.load(server.version)["log"].get("decode")
    spec = server.engine.perf.spec_enabled
    lines = []
    for index in range(count):
        if index % 2:
            lines.append(
                logfmt.line(
                    f'INFO:     127.0.0.1:{40000 + index % 20000} - "POST /generate HTTP/1.1" '
                    "200 OK",
                    "",
                )
            )
            continue
        lines.append(
            logfmt.decode_line(
                fields=fields,
                running_req=16,
                token=2048 + index % 512,
                token_usage=0.01,
                accept_len=4.2 if spec else None,
                accept_rate=0.46 if spec else None,
                cuda_graph=True,
                gen_throughput=1500.0 + index % 97,
                queue_req=0,
                prefix=server.prefix(0),
            )
        )
    sys.stdout.write("\n".join(lines) + "\n")
    sys.stdout.flush()
