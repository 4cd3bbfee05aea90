"""The canary's findings where nobody looks at a screen: `sglconsole exporter`'s series, its
webhook to Alertmanager and hosts.yaml's alert_command, with hysteresis in runs (two failed runs
in a row before the news, two passed before its end) — on a simulated server over real sshd whose
answers decay into loops after its first run, then come right again, and whose SGLang logs
KV canary violations (news once per process lifetime)."""

from __future__ import annotations

import json
import sys
import time

from tests.alert_receiver import Receiver
from tests.e2e.test_canary import h200, profiles
from tests.e2e.test_exporter import Exporter, parse_time, value, wait_metrics
from tests.e2e.test_real_stalls import set_host


def canary_alerts(receiver: Receiver) -> list[tuple[float, dict]]:
    return [
        (when, alert)
        for when, alert in receiver.alerts()
        if alert["labels"]["alertname"] == "SglconsoleCanary"
    ]


def test_a_looping_canary_is_alerted_once_and_its_end_too(fleet_factory, tmp_path):
    events = tmp_path / "events.jsonl"
    write = "import sys; open(sys.argv[1], 'a').write(sys.stdin.read())"
    fleet = fleet_factory(
        [h200(degrade_after=3, kv_canary_violations=2)],
        profiles(),
        extra_config={"alert_command": [sys.executable, "-c", write, str(events)]},
    )
    receiver = Receiver()
    exporter = Exporter(
        fleet.config_path, tmp_path / "stderr.log", "--webhook", receiver.url, "--resend", "1"
    )
    try:
        looping = wait_metrics(
            exporter,
            lambda s: (value(s, "sglconsole_canary_failing_runs", host="h200") or 0) >= 2,
            60,
            "two failed canary runs",
        )
        assert value(looping, "sglconsole_canary_ok", host="h200") == 0
        assert value(looping, "sglconsole_canary_verdict", verdict="DEGENERATE") == 1
        assert value(looping, "sglconsole_canary_verdict", verdict="OK") == 0
        assert value(looping, "sglconsole_canary_silent_while_healthy", host="h200") == 0
        deadline = time.monotonic() + 20
        while not canary_alerts(receiver):
            assert time.monotonic() < deadline, (receiver.posts, exporter.stderr()[-2000:])
            time.sleep(0.2)
        set_host(fleet, degrade_after=None)  # the answers come right again
        wait_metrics(
            exporter, lambda s: value(s, "sglconsole_canary_ok", host="h200") == 1, 30, "a pass"
        )
        deadline = time.monotonic() + 20
        while not any(parse_time(a["endsAt"]) <= when for when, a in canary_alerts(receiver)):
            assert time.monotonic() < deadline, (receiver.posts, exporter.stderr()[-2000:])
            time.sleep(0.2)
    finally:
        receiver.close()
        exporter.stop()
    told = canary_alerts(receiver)
    labels = told[0][1]["labels"]
    assert labels["canary"] == "DEGENERATE" and labels["severity"] == "critical", labels
    assert labels["host"] == "h200" and labels["port"] == "30000", labels
    assert "canary DEGENERATE" in told[0][1]["annotations"]["description"], told[0]
    assert {alert["startsAt"] for _, alert in told} == {told[0][1]["startsAt"]}  # one alert
    said = [json.loads(line) for line in events.read_text().splitlines()]
    canary = [
        (event["event"], event["canary"])
        for event in said
        if "canary" in event and "signal" not in event
    ]
    assert canary == [("problem", "DEGENERATE"), ("recovered", "OK")], said
    warned = [event for event in said if event.get("signal") == "kv_canary"]
    assert [(event["event"], event["canary"]) for event in warned] == [("problem", "KV_CANARY")]
    assert "KV canary found 2 violations" in warned[0]["reason"], warned
    sglang = [
        a for _, a in receiver.alerts() if a["labels"]["alertname"] == "SglconsoleSglangWarning"
    ]
    assert sglang and sglang[0]["labels"]["canary"] == "KV_CANARY", receiver.posts
