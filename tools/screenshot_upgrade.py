"""The README's picture of `sglconsole upgrade --dry-run`: the demo's looping 0.5.9 host (old059)
translated to 0.5.11, as the command prints it in a 150-column terminal, saved as SVG.

    python -m tools.screenshot_upgrade [--out screenshots/]

Starts only old059 of the demo fleet (no GPU needed), runs the real command against it over SSH
and records its colours (rich's own SVG export)."""

from __future__ import annotations

import argparse
import io
import os
import subprocess
import sys
import tempfile
from pathlib import Path

from rich.console import Console
from rich.text import Text

from sglconsole.sim.fleet.scenarios import demo_hosts, demo_profiles
from sglconsole.sim.fleet.start import SimFleet

WIDTH = 150
NAME = "upgrade-translation.svg"


def shoot(out: Path) -> Path:
    out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="sglconsole-shots-") as workdir:
        hosts = [host for host in demo_hosts(startup_s=1.0) if host.name == "old059"]
        fleet = SimFleet(Path(workdir), hosts, demo_profiles(), ssh="auto")
        try:
            path = fleet.start()
            fleet.wait_ready()
            argv = ["upgrade", "-c", str(path), "old059:30000", "--to", "0.5.11", "--dry-run"]
            env = {
                **os.environ,
                "FORCE_COLOR": "1",
                "COLUMNS": str(WIDTH),
                "TERM": "xterm-256color",
            }
            done = subprocess.run(
                [sys.executable, "-m", "sglconsole", *argv],
                capture_output=True,
                text=True,
                env=env,
                timeout=120,
            )
        finally:
            fleet.stop()
    if done.returncode != 0:
        raise SystemExit(f"upgrade --dry-run exited {done.returncode}: {done.stderr}")
    shown = done.stdout.replace(workdir, "/srv")  # the fleet's temporary folder is noise
    console = Console(record=True, width=WIDTH, file=io.StringIO(), force_terminal=True)
    console.print(Text.from_ansi(shown))
    saved = out / NAME
    console.save_svg(str(saved), title="sglconsole " + " ".join(argv[:1] + argv[3:]))
    return saved


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tools.screenshot_upgrade")
    parser.add_argument("--out", type=Path, default=Path("screenshots"))
    args = parser.parse_args(argv)
    os.environ.setdefault("XDG_STATE_HOME", tempfile.mkdtemp(prefix="sglconsole-state-"))
    print(shoot(args.out))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
