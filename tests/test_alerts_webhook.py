"""Alerts to Alertmanager's v2 API, posted to a real HTTP receiver on 127.0.0.1."""

from __future__ import annotations

import asyncio
import dataclasses
import time
from datetime import datetime

import pytest

from sglconsole.alerts import Alert
from sglconsole.alerts.webhook import Alertmanager, alert_url
from sglconsole.state.model import Status
from tests.alert_receiver import Receiver


@pytest.fixture
def receiver():
    receiver = Receiver()
    yield receiver
    receiver.close()


def ends(alert: dict) -> float:
    return datetime.fromisoformat(alert["endsAt"].replace("Z", "+00:00")).timestamp()


async def until(predicate, timeout: float = 10.0):
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, "timed out"
        await asyncio.sleep(0.02)


def test_urls():
    assert alert_url("http://am:9093") == "http://am:9093/api/v2/alerts"
    assert alert_url("http://am:9093/") == "http://am:9093/api/v2/alerts"
    assert alert_url("https://relay/hook/x") == "https://relay/hook/x"
    with pytest.raises(ValueError, match="http"):
        alert_url("am:9093")


async def test_a_worse_problem_resolves_the_one_before_and_a_recovery_resolves_it(receiver):
    manager = Alertmanager([receiver.url], resend_s=3600)
    now = time.time()
    try:
        manager.news(Alert("gpu1", 30000, Status.UP, Status.SLOW, "40 tok/s vs 95", now))
        await until(lambda: len(receiver.posts) == 1)
        (firing,) = receiver.posts[0][1]
        assert firing["labels"] == {
            "alertname": "SglconsoleSlow",
            "severity": "warning",
            "status": "SLOW",
            "host": "gpu1",
            "port": "30000",
            "server": "gpu1:30000",
            "source": "sglconsole",
        }
        assert firing["annotations"] == {
            "summary": "gpu1:30000 is SLOW (was UP)",
            "description": "40 tok/s vs 95",
        }
        assert ends(firing) > now + 3600  # expires by itself if nobody sends it again
        manager.news(Alert("gpu1", 30000, Status.SLOW, Status.LOOPING, "loops", now + 1))
        await until(lambda: len(receiver.posts) == 2)
        slow, looping = receiver.posts[1][1]  # one post: the end of one, the start of the other
        assert slow["labels"]["alertname"] == "SglconsoleSlow" and ends(slow) == pytest.approx(
            now + 1, abs=0.01
        )
        assert looping["labels"]["alertname"] == "SglconsoleLooping"
        assert looping["labels"]["severity"] == "critical" and ends(looping) > now + 3600
        manager.news(Alert("gpu1", 30000, Status.LOOPING, Status.UP, "serving", now + 2))
        await until(lambda: len(receiver.posts) == 3)
        (resolved,) = receiver.posts[2][1]
        assert resolved["labels"]["alertname"] == "SglconsoleLooping"
        assert resolved["startsAt"] == looping["startsAt"]
        assert ends(resolved) == pytest.approx(now + 2, abs=0.01)
        assert manager.firing == {}
    finally:
        await manager.close()


async def test_what_fires_is_sent_again_and_a_lost_resolution_is_retried(receiver):
    manager = Alertmanager([receiver.url], resend_s=0.3)
    resender = asyncio.create_task(manager.resend())
    try:
        manager.news(Alert("gpu2", None, Status.UP, Status.UNREACHABLE, "refused", time.time()))
        await until(lambda: len(receiver.posts) >= 3)  # the news, then again every 0.3 s
        assert all(
            [a["labels"]["alertname"] for a in batch] == ["SglconsoleUnreachable"]
            and "port" not in batch[0]["labels"]
            for _, batch in receiver.posts
        )
        count = len(receiver.posts)
        await until(lambda: len(receiver.posts) > count)  # just sent again: 0.3 s to the next
        receiver.refuse = 1  # Alertmanager is away when the host comes back
        manager.news(Alert("gpu2", None, Status.UNREACHABLE, Status.UP, "", time.time()))
        await until(lambda: receiver.refused)
        (lost,) = receiver.refused[0]
        assert ends(lost) <= time.time()  # the resolution was the post refused
        count = len(receiver.posts)
        await until(lambda: len(receiver.posts) > count)
        (resolved,) = receiver.posts[-1][1]
        assert resolved["labels"]["alertname"] == "SglconsoleUnreachable"
        assert ends(resolved) <= receiver.posts[-1][0]
        await asyncio.sleep(0.7)
        assert len(receiver.posts) == count + 1  # resolved and delivered: nothing more to send
    finally:
        resender.cancel()
        await manager.close()


async def test_a_router_alert_fires_apart_from_the_status_of_the_same_server(receiver):
    manager = Alertmanager([receiver.url], resend_s=3600)
    now = time.time()
    try:
        manager.news(Alert("r1", 30001, Status.UP, Status.SLOW, "40 tok/s vs 95", now))
        nobody = "router front: serving nobody (up, but the router does not list it) for 91 s"
        route = Alert("r1", 30001, Status.SLOW, Status.SLOW, nobody, now + 1)
        manager.news(dataclasses.replace(route, router="front", routing="serving nobody"))
        await until(lambda: len(receiver.posts) == 2)
        (firing,) = receiver.posts[1][1]  # the SLOW alert is not resolved by it
        assert firing["labels"]["alertname"] == "SglconsoleRouting"
        assert firing["labels"]["router"] == "front"
        assert firing["labels"]["routing"] == "serving nobody"
        assert firing["annotations"]["summary"] == f"r1:30001: {nobody}"
        assert len(manager.firing) == 2
        back = dataclasses.replace(route, router="front", routing="in router", reason="back")
        manager.news(back)
        await until(lambda: len(receiver.posts) == 3)
        (resolved,) = receiver.posts[2][1]
        assert resolved["labels"]["router"] == "front" and ends(resolved) <= time.time() + 1
        assert list(manager.firing) == [("r1", 30001)]  # the SLOW one still fires
    finally:
        await manager.close()


async def test_a_sign_before_an_outage_fires_apart_from_the_status_and_resolves(receiver):
    manager = Alertmanager([receiver.url], resend_s=3600)
    now = time.time()
    xid = "GPU Xid 79 on PCI 18:00: GPU has fallen off the bus."
    try:
        manager.news(Alert("gpu4", 30001, Status.SLOW, Status.SLOW, "40 tok/s vs 95", now))
        manager.news(Alert("gpu4", 30001, Status.UP, Status.UP, xid, now, sign="xid", sign_on=True))
        await until(lambda: len(receiver.posts) == 2)
        (firing,) = receiver.posts[1][1]
        assert firing["labels"]["alertname"] == "SglconsoleGpuXid"
        assert firing["labels"]["sign"] == "xid" and firing["labels"]["severity"] == "critical"
        assert firing["annotations"]["summary"] == f"gpu4:30001: {xid}"
        assert len(manager.firing) == 2  # the status's alert and the sign's, apart
        over = Alert("gpu4", 30001, Status.UP, Status.UP, f"over: {xid}", now + 5, sign="xid")
        manager.news(over)
        await until(lambda: len(receiver.posts) == 3)
        (resolved,) = receiver.posts[2][1]
        assert resolved["labels"]["alertname"] == "SglconsoleGpuXid" and ends(resolved) <= now + 6
        assert len(manager.firing) == 1
    finally:
        await manager.close()
