"""SVG screenshots of the console's main screens, taken from the simulated demo fleet.

    python -m tools.screenshots [--out screenshots/] [--record FILE]

Starts the demo fleet itself (no GPU needed), drives the console headless the
way a user would (keys only) and saves one SVG per screen. --record also
writes the session as a recording (tests/tui/data/ holds one made this way).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from sglconsole import config
from sglconsole.sim.fleet.scenarios import demo_fleet_hosts, demo_profiles
from sglconsole.sim.fleet.start import SimFleet
from sglconsole.state.fleet import FleetState, Status
from sglconsole.tui.app import ConsoleApp, make_app
from sglconsole.tui.screens.confirm import ConfirmScreen

SETTLE_S = 60.0
SIZES = {"small": (80, 24), "large": (160, 48)}


def story_ready(fleet: FleetState) -> bool:
    """The demo's story is on screen: the drifted server is SLOW (with its diff), old059 loops."""
    ct = fleet.server("ct129", 30000)
    old = fleet.server("old059", 30000)
    boxed = fleet.server("gpu-docker", 30000)  # where Docker could run: the SGLang inside known
    return bool(
        ct and ct.status == Status.SLOW and ct.drift and old and old.status == Status.LOOPING
    ) and (boxed is None or boxed.container_version is not None)


async def until(check: Callable[[], bool], timeout: float, step: float = 0.2) -> bool:
    deadline = time.monotonic() + timeout
    while not check():
        if time.monotonic() > deadline:
            return False
        await asyncio.sleep(step)
    return True


async def shoot(app: ConsoleApp, pilot, out: Path, name: str) -> Path:
    await pilot.pause(0.3)
    app.save_screenshot(f"{name}.svg", str(out))
    return out / f"{name}.svg"


async def tour(app: ConsoleApp, pilot, out: Path, size: str) -> list[Path]:
    """Overview (the 4-server host), the drifted server's diff and log, the restore dialog, help,
    and the server in a Docker container."""
    main = app.main
    saved = []
    main.tree.select(("h200x4", None))
    saved.append(await shoot(app, pilot, out, f"fleet-overview-{size}"))
    main.tree.select(("ct129", 30000))
    await pilot.press("d")
    saved.append(await shoot(app, pilot, out, f"server-drift-{size}"))
    await pilot.press("l")
    await pilot.pause(1.0)
    saved.append(await shoot(app, pilot, out, f"server-log-{size}"))
    await pilot.press("R")
    if await until(lambda: isinstance(app.screen, ConfirmScreen), 20):
        saved.append(await shoot(app, pilot, out, f"confirm-restore-{size}"))
        await pilot.press("n")
    await pilot.press("question_mark")
    saved.append(await shoot(app, pilot, out, f"help-{size}"))
    await pilot.press("escape")
    if app.session.fleet.server("gpu-docker", 30000) is not None:  # where Docker could run
        main.tree.select(("gpu-docker", 30000))
        await pilot.press("l")
        await pilot.pause(1.0)
        saved.append(await shoot(app, pilot, out, f"server-container-{size}"))
    return saved


async def incident(app: ConsoleApp, pilot, out: Path) -> list[Path]:
    """The README's incident walkthrough: SLOW -> why -> restore -> verified, as the operator
    sees it (run last: the restore changes the fleet)."""
    from sglconsole.tui.history import ActionRecord

    def restore_done(count: int = 1) -> Callable[[], bool]:
        def done() -> bool:
            ended = [
                r
                for r in app.session.history
                if isinstance(r, ActionRecord) and r.action == "restore" and not r.running
            ]
            return len(ended) >= count

        return done

    main, saved = app.main, []
    main.tree.select(("ct129", 30000))
    await pilot.press("g")
    saved.append(await shoot(app, pilot, out, "incident-1-slow"))
    await pilot.press("d")
    saved.append(await shoot(app, pilot, out, "incident-2-why"))
    await pilot.press("R")
    if not await until(lambda: isinstance(app.screen, ConfirmScreen), 20):
        return saved
    saved.append(await shoot(app, pilot, out, "incident-3-confirm"))
    await pilot.press("y")
    if await until(restore_done(1), 120):
        await until(lambda: main.server is not None and main.server.status == Status.UP, 30)
        saved.append(await shoot(app, pilot, out, "incident-4-verified"))
    # a restore that cannot help: the looping server already runs its profile
    main.tree.select(("old059", 30000))
    await pilot.press("R")
    if not await until(lambda: isinstance(app.screen, ConfirmScreen), 20):
        return saved
    saved.append(await shoot(app, pilot, out, "incident-5-looping-warned"))
    await pilot.press("y")
    if await until(restore_done(2), 120):
        await pilot.pause(2.0)
        saved.append(await shoot(app, pilot, out, "incident-6-failed-restore"))
    return saved


async def run(out: Path, record: Path | None) -> list[Path]:
    out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="sglconsole-shots-") as workdir:
        hosts, no_containers = demo_fleet_hosts(startup_s=1.0)
        if no_containers:
            print(f"note: {no_containers}")
        fleet = SimFleet(Path(workdir), hosts, demo_profiles(), ssh="auto")
        try:
            cfg = config.load(fleet.start())
            saved: list[Path] = []
            for size, dims in SIZES.items():
                app = make_app(cfg, record=record if size == "large" else None)
                async with app.run_test(size=dims) as pilot:
                    if not await until(lambda a=app: story_ready(a.session.fleet), SETTLE_S):
                        print(
                            "note: the demo story did not fully appear in time; "
                            "screenshots show what there is"
                        )
                    saved += await tour(app, pilot, out, size)
                    if size == "large":
                        saved += await incident(app, pilot, out)
            return saved
        finally:
            fleet.stop()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m tools.screenshots", description=__doc__.splitlines()[0]
    )
    parser.add_argument(
        "--out",
        type=Path,
        default=Path("screenshots"),
        help="folder for the SVGs (default screenshots/)",
    )
    parser.add_argument(
        "--record", type=Path, help="also record the large session to this JSONL file"
    )
    args = parser.parse_args(argv)
    os.environ.setdefault(
        "XDG_STATE_HOME", tempfile.mkdtemp(prefix="sglconsole-state-")
    )  # no audit files in ~
    for path in asyncio.run(run(args.out, args.record)):
        print(path)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
