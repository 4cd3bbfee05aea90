"""A task that loops on a time-limited wait stops when cancelled, even when the cancel arrives in
the same turn of the event loop as what it waited for (Python 3.11's asyncio.wait_for loses that
cancel: the HTTP feed's loop then ran on, and closing its host waited on it for good)."""

from __future__ import annotations

import asyncio
import re

import pytest

from sglconsole.core.deadline import cancel_all, within
from tests.test_architecture import PACKAGE


async def test_a_cancel_that_arrives_as_the_wait_ends_stops_the_loop():
    event = asyncio.Event()
    turns = 0

    async def poll_forever() -> None:  # the shape of remote.feeds.http's loop
        nonlocal turns
        while True:
            turns += 1
            try:
                await within(event.wait(), 5.0)
            except TimeoutError:
                pass
            event.clear()

    task = asyncio.create_task(poll_forever())
    await asyncio.sleep(0.05)
    event.set()  # what it waits for completes...
    task.cancel()  # ...and its cancel comes in the same turn
    done, _ = await asyncio.wait({task}, timeout=2.0)
    assert task in done and task.cancelled(), f"still looping after {turns} turns"


async def test_within_times_out_and_returns():
    assert await within(asyncio.sleep(0, "answer"), 1.0) == "answer"
    began = asyncio.get_running_loop().time()
    try:
        await within(asyncio.Event().wait(), 0.1)
    except TimeoutError:
        assert asyncio.get_running_loop().time() - began < 1.0
    else:
        raise AssertionError("no TimeoutError")


def test_the_console_never_calls_asyncio_wait_for():
    """The simulator is not the console (it borrows none of its code) and may."""
    callers = sorted(
        path.relative_to(PACKAGE).as_posix()
        for path in PACKAGE.rglob("*.py")
        if "sim" not in path.relative_to(PACKAGE).parts[:1]
        and re.search(r"\bwait_for\(", path.read_text(encoding="utf-8"))
    )
    assert not callers, f"use sglconsole.core.deadline.within: {callers}"


async def test_cancel_all_stops_a_loop_whose_library_lost_the_cancel():
    """asyncssh waits on its run and connect timeouts with asyncio.wait_for: a feed looping around
    one loses a cancel that comes as the wait ends. cancel_all cancels it again until it ends;
    one cancel and a gather (what the monitors did) would wait on it for good."""
    turns = 0

    async def poll_forever(event: asyncio.Event) -> None:  # the shape of a feed around ssh.run
        nonlocal turns
        while True:
            turns += 1
            try:
                await asyncio.wait_for(event.wait(), 5.0)  # as asyncssh's process.wait does
            except TimeoutError:
                pass
            event.clear()

    async def lost_cancel() -> asyncio.Task:
        event = asyncio.Event()
        task = asyncio.create_task(poll_forever(event))
        await asyncio.sleep(0.05)
        event.set()  # what it waits for completes...
        task.cancel()  # ...and its cancel comes in the same turn
        await asyncio.sleep(0.05)
        return task

    once = await lost_cancel()
    done, _ = await asyncio.wait({once}, timeout=1.0)
    if done:
        pytest.skip("this Python's asyncio.wait_for lost no cancel (3.12+)")
    await within(cancel_all([once]), 5.0)
    assert once.cancelled(), f"still looping after {turns} turns"
