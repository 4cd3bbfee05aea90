"""bench/loop_profile.py: the idle pane's CPU by event-loop callback (idle_cost.py --profile)."""

from __future__ import annotations

import asyncio
import json
import time

from bench import loop_profile


def spin(seconds: float) -> None:
    """CPU on this thread, not a sleep: thread CPU time is what is counted."""
    end = time.thread_time() + seconds
    while time.thread_time() < end:
        pass


async def busy_feed() -> None:
    for _ in range(5):
        spin(0.01)
        await asyncio.sleep(0)


async def idle_feed() -> None:
    for _ in range(5):
        await asyncio.sleep(0)


def test_each_task_is_charged_its_own_cpu_and_a_wrapped_function_its_calls(tmp_path):
    original = asyncio.events.Handle._run
    profile = loop_profile.LoopProfile()
    profile.install()
    profile.wrap("tests.test_loop_profile:spin")
    try:
        asyncio.run(busy_feed())  # before start(): not counted
        profile.start()

        async def both():
            await asyncio.gather(busy_feed(), idle_feed())
            asyncio.get_running_loop().call_soon(spin, 0.005)
            await asyncio.sleep(0.01)

        asyncio.run(both())
    finally:
        profile.uninstall()
    found = profile.snapshot()
    stats = found["stats"]
    busy_calls, busy_cpu = stats["task busy_feed"]
    assert busy_calls >= 5 and 0.045 < busy_cpu < 0.5, stats
    assert stats["task idle_feed"][1] < 0.01, stats
    assert stats["fn spin"][0] == 6, stats  # 5 in busy_feed, 1 as a plain callback
    assert stats["cb tests.test_loop_profile.spin"][0] == 1, stats
    assert asyncio.events.Handle._run is original and not hasattr(spin, "__wrapped__")
    out = tmp_path / "profile.json"
    out.write_text(json.dumps(found))
    table = loop_profile.report(out)
    callbacks = [line for line in table.splitlines()[2:] if "  fn " not in line]
    assert callbacks[0].endswith("task busy_feed"), table  # the costliest first


def test_a_name_that_is_not_there_is_said_before_anything_runs():
    for spec, why in (
        ("tests.test_loop_profile", "expected MODULE:ATTR"),
        ("tests.no_such_module:f", "no module tests.no_such_module"),
        ("tests.test_loop_profile:nothing", "tests.test_loop_profile has no nothing"),
        ("bench.loop_profile:LoopProfile.nothing", "has no LoopProfile.nothing"),
    ):
        try:
            loop_profile.resolve(spec)
        except ValueError as exc:
            assert why in str(exc), exc
        else:
            raise AssertionError(f"{spec} resolved")
    owner, name, found = loop_profile.resolve("bench.loop_profile:LoopProfile.wrap")
    assert owner is loop_profile.LoopProfile and name == "wrap" and callable(found)
