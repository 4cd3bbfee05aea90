"""Numbers from the process that wrote them, on the real log of three SGLang 0.5.12 lifetimes
appended to one file (pids 521, 2535, 3216): a fresh pid never shows the previous one's tok/s."""

from __future__ import annotations

from datetime import datetime

from sglconsole.core.log_owner import started_pid
from sglconsole.state.ingest import take_line
from tests.conftest import FIXTURES
from tests.tui.test_one_view import one_server_fleet, process, run

# bytes, split on \n only: the progress bars hold bare \r, which read_text() would turn into lines
LOG = (FIXTURES / "real-sglang-0.5.12-h200" / "sglang-30000.log").read_bytes().decode().split("\n")


def log_time(line_no: int) -> float:
    """Epoch seconds of a line's [YYYY-MM-DD HH:MM:SS] stamp, as this machine reads it."""
    return datetime.strptime(LOG[line_no - 1][1:20], "%Y-%m-%d %H:%M:%S").timestamp()


def test_the_real_log_names_each_lifetimes_writer():
    assert [started_pid(line) for line in LOG if started_pid(line)] == [521, 2535, 3216]


def test_a_fresh_pid_does_not_show_the_last_lines_of_the_one_before():
    fleet = one_server_fleet()
    server = fleet.hosts["h"].servers[30000]
    for line in LOG[
        :250
    ]:  # lifetimes 1 and 2: pid 521 served (last decode 552.05 tok/s), 2535 did not
        take_line(server, line, log_time(250))
    # 2535's start as /proc tells it, an hour off the log's local time (a host in another time zone)
    run(fleet, process(2535, log_time(181) - 3600), log_time(250))
    assert (server.view.tok_s, server.view.load) == (None, None)

    for line in LOG[250:]:  # the restore: pid 3216 starts, serves one request
        take_line(server, line, log_time(282))
    run(fleet, process(3216, log_time(253) - 3600), log_time(282))
    view = server.view
    assert view.pid == 3216 and (view.load.running_req, view.load.accept_len) == (1, 6.75), view
    assert (
        view.tok_s is None
    )  # its only decode line follows an idle period: SGLang's figure means nothing


def test_a_long_start_shows_sglangs_own_milestones():
    fleet = one_server_fleet()
    server = fleet.hosts["h"].servers[30000]
    started = log_time(4)
    run(fleet, process(521, started), started + 1)
    server.health, server.ready_seen_at = None, None
    for line in LOG[:37]:  # up to `Capture cuda graph end` of the first lifetime
        take_line(server, line, log_time(37))
    fleet.publish("h", log_time(37))
    assert server.status.value == "STARTING"
    assert (
        server.reason == f"starting for {log_time(37) - started:.0f} s: Capture cuda graph end"
    ), server.reason


def _decode_line(when: float, tok_s: float) -> str:
    stamp = datetime.fromtimestamp(when).strftime("%Y-%m-%d %H:%M:%S")
    return (
        f"[{stamp}] Decode batch, #running-req: 2, #token: 1024, token usage: 0.01, "
        f"cuda graph: True, gen throughput (token/s): {tok_s:.2f}, #queue-req: 0"
    )


def test_a_restart_with_a_gap_drops_the_old_pid_and_its_late_lines():
    """A container restart: the watcher sees the old process go, then the new one; the engine's
    follow of the old start delivers its last line after the new start's first ones (a fresh
    clone's podman restart test kept pid 94's samples under pid 342). The old pid's numbers are
    gone, and its late line must not hide the new one's tok/s."""
    fleet = one_server_fleet()
    server = fleet.hosts["h"].servers[30000]
    start = 1_800_000_000.0
    run(fleet, process(94, start), start + 5)
    for second in range(6, 12):
        take_line(server, _decode_line(start + second, 90.0), start + second, writer=94)
    run(fleet, None, start + 20)  # stopping: no process for a scan
    assert server.view.tok_s is None
    run(fleet, process(342, start + 25), start + 26)
    for second in range(30, 36):
        take_line(server, _decode_line(start + second, 120.0), start + second, writer=342)
    take_line(server, _decode_line(start + 19, 95.0), start + 36, writer=94)  # the old follow's
    fleet.publish("h", start + 36)
    assert [sample.pid for sample in server.history] == [342] * 6
    assert server.view.tok_s == 120.0, server.view
