"""What is new at the end of a bounded deque since we last looked (log lines, samples)."""

from __future__ import annotations

from collections import deque
from typing import Generic, TypeVar

Item = TypeVar("Item")
MARK = 3


class TailCursor(Generic[Item]):
    """Remembers the last few items it returned (by identity) and finds them again.

    A deque with maxlen has no running index, so we look for where we left off;
    holding on to those items keeps their ids from being reused.
    """

    def __init__(self, items: deque[Item]):
        self.items = items
        self._mark: tuple[Item, ...] = ()

    def take(self) -> list[Item]:
        items = list(self.items)
        new = items[_resume_at(items, self._mark) :]
        self._mark = tuple(items[-MARK:])
        return new

    def peek(self) -> list[Item]:
        """What take() would return, without moving on."""
        items = list(self.items)
        return items[_resume_at(items, self._mark) :]

    def skip(self) -> None:
        """Consider everything seen (e.g. after rendering the whole buffer)."""
        self._mark = tuple(list(self.items)[-MARK:])


def _resume_at(items: list, mark: tuple) -> int:
    # the oldest marked items may have been pushed out of the deque since: try the newer ones alone
    for length in range(len(mark), 0, -1):
        tail = mark[-length:]
        for end in range(len(items), length - 1, -1):
            if all(
                item is marked for item, marked in zip(items[end - length : end], tail, strict=True)
            ):
                return end
    return 0
