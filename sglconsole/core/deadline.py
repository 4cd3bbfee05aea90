"""Awaiting with a time limit, the way every loop of the console may: `asyncio.wait_for` of
Python 3.11 loses a cancel that arrives as the awaited thing completes (CPython gh-86296), and a
feed's task that loops forever then never stops: closing its host waited on it for good."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable
from typing import TypeVar

Result = TypeVar("Result")


async def within(awaitable: Awaitable[Result], timeout: float) -> Result:
    """AWAITABLE's result, or TimeoutError after TIMEOUT seconds; a cancel always propagates."""
    async with asyncio.timeout(timeout):
        return await awaitable
