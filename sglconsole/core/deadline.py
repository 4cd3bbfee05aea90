"""Awaiting with a time limit, the way every loop of the console may: `asyncio.wait_for` of
Python 3.11 loses a cancel that arrives as the awaited thing completes (CPython gh-86296), and a
feed's task that loops forever then never stops: closing its host waited on it for good."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Iterable
from typing import TypeVar

Result = TypeVar("Result")


async def within(awaitable: Awaitable[Result], timeout: float) -> Result:
    """AWAITABLE's result, or TimeoutError after TIMEOUT seconds; a cancel always propagates."""
    async with asyncio.timeout(timeout):
        return await awaitable


async def cancel_all(tasks: Iterable[asyncio.Task], every: float = 0.5) -> None:
    """Cancel TASKS and wait until each has ended, cancelling those still running again every
    EVERY seconds: a library's own `asyncio.wait_for` (asyncssh's run and connect timeouts) can
    lose a cancel as `within` never does, and a feed looping around it would run on, its closer
    waiting for good. A cancel of the caller meanwhile waits for them too, then propagates:
    nothing it cancels outlives it."""
    tasks = list(tasks)
    pending = {task for task in tasks if not task.done()}
    interrupted = False
    while pending:
        for task in pending:
            task.cancel()
        try:
            _, pending = await asyncio.wait(pending, timeout=every)
        except asyncio.CancelledError:
            interrupted = True
    for task in tasks:  # retrieved: no "exception was never retrieved" at exit
        if not task.cancelled():
            task.exception()
    if interrupted:
        raise asyncio.CancelledError
