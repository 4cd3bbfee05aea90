"""Hostile input: nothing a file, a host or a process can say crashes the console or drives the
terminal."""

from __future__ import annotations

import asyncio
import io
import json
import re
from pathlib import Path

import pytest
import yaml
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from rich.console import Console

from sglconsole import config
from sglconsole.commands.tables import fleet_view
from sglconsole.config import Host, Server
from sglconsole.config.launch_spec import spec_for_profile
from sglconsole.core.processes import ProcInfo, analyse
from sglconsole.core.text import clean
from sglconsole.errors import ConfigError
from sglconsole.remote.drift import report_from
from sglconsole.remote.feeds.host_monitor import HostMonitor
from sglconsole.remote.sglang_args import Canonical, Verdict, parse_output
from sglconsole.remote.ssh.connection import SshHost
from sglconsole.state.fleet import FleetState

EXAMPLE = (Path(__file__).resolve().parents[2] / "hosts.yaml").read_text()
LINE = re.compile(r"^[^:\n]+:\d+: ", re.M)

scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(2**40), 2**40),
    st.floats(allow_nan=False),
    st.text(max_size=30),
)
documents = st.recursive(
    scalars,
    lambda inner: st.one_of(
        st.lists(inner, max_size=4), st.dictionaries(st.text(max_size=12), inner, max_size=4)
    ),
    max_leaves=25,
)
keys = st.sampled_from(
    [
        "hosts",
        "profiles",
        "defaults",
        "servers",
        "port",
        "address",
        "args",
        "env",
        "gpus",
        "profile",
        "baseline",
        "jump",
        "exec_prefix",
        "launcher",
        "python",
        "known_hosts",
        "x",
    ]
)
shaped = st.recursive(
    scalars,
    lambda inner: st.one_of(st.lists(inner, max_size=3), st.dictionaries(keys, inner, max_size=5)),
    max_leaves=30,
)


def assert_clear(text: str) -> None:
    try:
        config.parse(text, "hosts.yaml")
    except ConfigError as exc:
        for problem in exc.problems:
            assert LINE.match(problem), problem  # always file:line


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.one_of(documents, shaped))
@example(
    {"[": None}
)  # a key that looks like one of pydantic's internal location steps (CI once failed on it)
@example({"hosts": {}, "int": 1})
def test_any_yaml_document_is_loaded_or_refused_with_file_and_line(document):
    assert_clear(yaml.safe_dump(document))


def test_a_key_that_looks_like_pydantic_internals_is_named_in_the_error():
    with pytest.raises(ConfigError) as caught:
        config.parse("hosts: {}\n'[': 1\n", "hosts.yaml")
    assert 'hosts.yaml:2: "[": unknown key' in str(caught.value)


@settings(max_examples=150, deadline=None)
@given(st.data())
def test_edits_of_the_example_are_loaded_or_refused_with_file_and_line(data):
    lines = EXAMPLE.splitlines()
    for _ in range(data.draw(st.integers(1, 3))):
        index = data.draw(st.integers(0, len(lines) - 1))
        action = data.draw(st.sampled_from(["delete", "insert", "replace", "indent", "dedent"]))
        junk = data.draw(st.text(max_size=20))
        if action == "delete":
            del lines[index]
        elif action == "insert":
            lines.insert(index, junk)
        elif action == "replace":
            lines[index] = lines[index][: len(lines[index]) // 2] + junk
        elif action == "indent":
            lines[index] = "  " + lines[index]
        else:
            lines[index] = lines[index].lstrip()
    assert_clear("\n".join(lines) + "\n")


@settings(max_examples=200, deadline=None)
@given(
    st.dictionaries(
        st.sampled_from(
            [
                "pid",
                "ppid",
                "pgid",
                "sid",
                "state",
                "comm",
                "argv",
                "start",
                "start_ticks",
                "main",
                "env",
                "cwd",
                "stdout",
            ]
        ),
        documents,
        max_size=13,
    )
)
@example({"pid": float("inf")})  # int(inf) raises OverflowError (a clean-clone run found it)
def test_process_records_from_a_host_never_raise(data):
    proc = ProcInfo.from_json(data)
    if proc is None:
        assert not well_typed(data), data  # refused only for a field of the wrong type
        return
    assert proc.pid == int(data["pid"]) and all(isinstance(a, str) for a in proc.argv)
    view = analyse([proc], [], [])
    assert all(server.main.pid == proc.pid for server in view.servers) and len(view.servers) <= 1


def well_typed(data: dict) -> bool:
    """What a process record must be for the console to take it: numbers where numbers go, a list of
    arguments, a mapping of environment variables."""
    try:
        int(data["pid"])
        for key in ("ppid", "pgid", "sid", "start_ticks"):
            int(data.get(key, 0))
        float(data.get("start", 0.0))
        list(data.get("argv") or ())
        env = data.get("env")
        if env is not None:
            (env or {}).items()
        return True
    except (KeyError, TypeError, ValueError, AttributeError, OverflowError):
        return False


def monitor() -> HostMonitor:
    cfg = config.Config(
        config.HostsFile.model_validate(
            {
                "hosts": {
                    "h": {
                        "address": "127.0.0.1",
                        "servers": [{"port": 30000, "profile": "p", "log": "/l"}],
                    }
                },
                "profiles": {"p": {"args": ["--model-path", "m"]}},
            }
        ),
        None,
    )
    fleet = FleetState(cfg)
    return HostMonitor("h", cfg.hosts["h"], SshHost("h", cfg.hosts["h"]), fleet)


class _Sink:
    def write(self, text: str) -> None:
        pass


@example(line='{"t": []}')  # a developer run found it: a list as the kind raised
@settings(max_examples=300, deadline=None)
@given(
    st.one_of(
        st.text(max_size=300),
        documents.map(json.dumps),
        st.fixed_dictionaries(
            {"t": st.sampled_from(["log", "procs", "apps", "log_state", "hb"])},
            optional={
                "lines": documents,
                "procs": documents,
                "path": st.sampled_from(["/l", "/x"]),
                "out": st.text(),
                "rc": documents,
                "state": documents,
                "ino": documents,
                "off": documents,
            },
        ).map(json.dumps),
    )
)
def test_anything_the_watcher_prints_never_raises(line):
    monitor().watcher.handle(line, _Sink())


@settings(max_examples=100, deadline=None)
@given(documents)
def test_any_server_info_json_never_breaks_the_drift_report(info):
    verdict = Verdict(
        True,
        "0.5.23",
        "python3",
        {},
        {
            "profile": Canonical({"tp_size": 2}, {"tp_size"}),
            "running": Canonical({"tp_size": 1}, {"tp_size"}),
        },
    )
    profile = config.Profile(args=["--tp-size", "2"])
    spec = spec_for_profile("h", Server(port=30000, profile="p"), "p", profile)
    report = report_from(verdict, spec, None, info if isinstance(info, dict) else None)
    # whatever the server says of itself, the difference in the command lines is still reported
    (tp,) = [row for row in report.to_dict()["rows"] if row["dest"] == "tp_size"]
    assert (tp["profile"], tp["running"], tp["state"]) == (2, 1, "DIFFERENT"), tp
    assert report.differs
    json.dumps(report.to_dict(), default=str)


@settings(max_examples=100, deadline=None)
@given(st.text(max_size=500))
def test_any_snippet_output_is_understood_or_refused(text):
    verdict = parse_output(text, text)
    assert verdict.ok or verdict.error


HOSTILE = [
    "[bold red]RED[/bold red] [link=https://evil.example]click[/link] [@click=app.quit]quit[/]",
    "\x1b]52;c;ZWNobyBwd25lZA==\x07clipboard",  # OSC 52: write the operator's clipboard
    "\x1b[2J\x1b[H\x1b[31mscreen cleared",  # erase screen, home cursor, red
    "\x1b]0;title hijack\x07",
    "bell\x07 backspace\x08 nul\x00 del\x7f csi\x9b31m",
]


@pytest.mark.parametrize("text", HOSTILE)
def test_host_text_is_shown_literally_and_cannot_drive_the_terminal(text):
    cfg = config.Config(
        config.HostsFile.model_validate(
            {
                "hosts": {
                    "h": {"address": "127.0.0.1", "servers": [{"port": 30000, "profile": "p"}]}
                },
                "profiles": {"p": {"args": ["--model-path", "m"]}},
            }
        ),
        None,
    )
    fleet = FleetState(cfg)
    host = fleet.hosts["h"]
    host.reachable = False
    host.error = text
    fleet.publish("h")  # an unreachable host's error is every server's reason
    assert host.servers[30000].reason == text
    out = io.StringIO()
    Console(file=out, force_terminal=True, color_system="truecolor", width=200).print(
        fleet_view(fleet)
    )
    rendered = out.getvalue()
    escapes = re.findall(r"\x1b[^m]*m|\x1b", rendered)
    assert all(re.fullmatch(r"\x1b\[[0-9;]*m", e) for e in escapes), (
        escapes
    )  # only rich's own colours
    for forbidden in ("\x1b]", "\x07", "\x1b[2J", "\x1b[H", "\x00", "\x08", "\x9b"):
        assert forbidden not in rendered
    if "[bold red]" in text:
        plain = re.sub(r"\x1b\[[0-9;]*m", "", rendered)
        assert (
            "[bold red]RED[/bold red]" in plain and "[@click=app.quit]" in plain
        )  # literally, not as markup
    assert clean(text) == clean(clean(text))


def test_a_hostile_value_reaches_the_host_byte_exact_over_real_ssh(sshd):
    strings = st.text(
        st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00"), max_size=40
    )

    @settings(max_examples=40, deadline=None)
    @given(st.lists(strings, min_size=1, max_size=5))
    def check(values):
        async def run():
            host = SshHost("h", Host.model_validate(sshd.host_entry(exec_prefix=["env", "X=1"])))
            try:
                result = await host.run(
                    ["python3", "-c", "import json,sys; print(json.dumps(sys.argv[1:]))", *values]
                )
            finally:
                await host.close()
            assert json.loads(result.stdout) == values

        asyncio.run(run())

    check()
