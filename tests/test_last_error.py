"""A server that is not running says its log's last error; a traceback whose error line is not
written yet must not be shown as if its header were the error."""

from __future__ import annotations

from sglconsole.state.model import ServerState
from sglconsole.state.status import last_error


def server_with(*errors: tuple[float, str]) -> ServerState:
    server = ServerState("ct129", 30000, None, None, None)
    server.errors.extend(errors)
    return server


def test_the_exception_line_is_the_error():
    server = server_with(
        (100.0, "Traceback (most recent call last):"),
        (100.5, "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB"),
    )
    said = last_error(server, 110.0)
    assert "torch.OutOfMemoryError: CUDA out of memory" in said and "ago" in said


def test_a_traceback_still_being_written_says_so():
    said = last_error(server_with((100.0, "Traceback (most recent call last):")), 100.2)
    assert "a Python traceback, its error line not in the log yet" in said
    assert "Traceback (most recent call last)" not in said


def test_no_error_no_words():
    assert last_error(server_with(), 1.0) == ""
