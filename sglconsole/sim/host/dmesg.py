"""`dmesg` of a simulated host (util-linux's options the console uses): the host's kernel log,
ROOT/sim/kmsg (sim/host/signs.py writes it), printed as the real tool prints it.

    dmesg [--time-format iso] [--follow|-w] [--nopager]

`--time-format iso` prints `2026-12-05T21:40:01,123456+00:00 TEXT`; without it, `[ SECONDS] TEXT`
(seconds since the host's first kernel line). With host.json's "kernel_log": "denied" it answers
as the kernel does to a login without CAP_SYSLOG under kernel.dmesg_restrict=1.
"""

from __future__ import annotations

import os
import sys
import time
from datetime import UTC, datetime

from sglconsole.sim import gpustate

DENIED = "dmesg: read kernel buffer failed: Operation not permitted"
BOOT_LINE = "Linux version 6.8.0-sglsim (sglsim@build) #1 SMP PREEMPT_DYNAMIC"
POLL_S = 0.2


def program(root: str, argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if gpustate.load_host(root).get("kernel_log") == "denied":
        print(DENIED, file=sys.stderr)
        return 1
    iso = "iso" in argv or "--time-format=iso" in argv
    follow = "--follow" in argv or "-w" in argv
    path = os.path.join(root, "sim", "kmsg")
    if not os.path.exists(path):
        with open(path, "a", encoding="utf-8") as file:
            file.write(f"{time.time():.6f} {BOOT_LINE}\n")
    boot = None
    offset = 0
    try:
        while True:
            with open(path, encoding="utf-8", errors="replace") as file:
                file.seek(offset)
                chunk = file.read()
            complete = chunk[: chunk.rfind("\n") + 1]
            offset += len(complete.encode())
            for line in complete.splitlines():
                stamp, _, text = line.partition(" ")
                try:
                    when = float(stamp)
                except ValueError:
                    continue
                boot = when if boot is None else boot
                sys.stdout.write(_format(when, boot, text, iso) + "\n")
            sys.stdout.flush()
            if not follow:
                return 0
            time.sleep(POLL_S)
    except (BrokenPipeError, KeyboardInterrupt):
        return 0


def _format(when: float, boot: float, text: str, iso: bool) -> str:
    if iso:
        moment = datetime.fromtimestamp(when, UTC)
        return moment.strftime("%Y-%m-%dT%H:%M:%S,%f+00:00") + " " + text
    return f"[{when - boot:12.6f}] {text}"
