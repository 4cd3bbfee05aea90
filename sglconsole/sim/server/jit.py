"""A simulated JIT build (flashinfer compiling its kernels on a scheduler's first sampled request).

Started by a scheduler child in a session of its own, like a build tool: a "ninja" that keeps a
few "nvcc" compiles running, each in a process group of its own. Killed, the ninja leaves its
compiles running (they do not watch their parent): what a kill that only follows the server's
process group, or only the processes it saw at first, leaves behind holding a CPU.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

COMPILES = 2
COMPILE_S = 60.0


def compile_job() -> None:
    try:
        import setproctitle

        setproctitle.setproctitle("nvcc -c flashinfer_kernel.cu")
    except ImportError:
        pass
    time.sleep(COMPILE_S)


def build() -> None:
    try:
        import setproctitle

        setproctitle.setproctitle("ninja -v flashinfer")
    except ImportError:
        pass
    signal.signal(signal.SIGTERM, lambda *_: os._exit(0))  # the compiles stay behind
    jobs: list[subprocess.Popen] = []
    while True:
        jobs = [job for job in jobs if job.poll() is None]
        while len(jobs) < COMPILES:
            command = [sys.executable, "-m", "sglconsole.sim.server.jit", "--compile"]
            jobs.append(subprocess.Popen(command, stdin=subprocess.DEVNULL, process_group=0))
        time.sleep(0.2)


if __name__ == "__main__":
    compile_job() if "--compile" in sys.argv else build()
