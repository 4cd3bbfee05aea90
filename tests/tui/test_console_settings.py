"""The operator's settings file (theme, key bindings by id) and TEXTUAL_THEME: what the console
uses, what its help and footer say, and a clear error for a broken file."""

from __future__ import annotations

import re

import pytest

from sglconsole.errors import ConfigError, UsageError
from sglconsole.tui.app import make_app
from sglconsole.tui.screens.help import keys_table
from tests.tui.helpers import plain
from tests.tui.test_operator_trust import said


@pytest.fixture
def settings(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path))
    monkeypatch.delenv("TEXTUAL_THEME", raising=False)
    path = tmp_path / "sglconsole" / "console.toml"
    path.parent.mkdir()
    return path


async def test_theme_and_keys_come_from_the_settings_file(settings, demo_replay):
    settings.write_text('theme = "light"\n[keys]\nkill = "ctrl+x"\n')
    app = make_app(None, replay=demo_replay)
    assert app.theme == "textual-light"
    async with app.run_test(size=(100, 30), notifications=True) as pilot:
        app.main.tree.select(("ct129", 30000))
        await pilot.pause()
        table = plain(keys_table(app))
        assert re.search(r"\^x\s+Kill", table) and not re.search(r"\^k\s+Kill", table), table
        await pilot.press("ctrl+x")  # the key the operator chose is the one that acts
        await pilot.pause()
        assert any("kill is off" in message for message in said(app)), said(app)


def test_textual_theme_wins_over_the_file_and_theme_over_both(settings, demo_replay, monkeypatch):
    settings.write_text('theme = "light"\n')
    monkeypatch.setenv("TEXTUAL_THEME", "nord")
    assert make_app(None, replay=demo_replay).theme == "nord"
    assert make_app(None, replay=demo_replay, theme="dark").theme == "textual-dark"


def test_a_broken_settings_file_is_named_with_its_line(settings, demo_replay):
    settings.write_text('theme = "light"\n[keys\n')
    with pytest.raises(ConfigError, match=r"console\.toml: .*line 2"):
        make_app(None, replay=demo_replay)
    settings.write_text('[keys]\nkil = "ctrl+x"\n')
    with pytest.raises(UsageError, match=r"console\.toml: \[keys\]: unknown binding id 'kil'"):
        make_app(None, replay=demo_replay)


def test_a_key_bound_to_two_actions_is_refused_naming_both(settings, demo_replay):
    settings.write_text('[keys]\nkill = "R"\n')  # R is restore's key
    with pytest.raises(UsageError) as refused:
        make_app(None, replay=demo_replay)
    message = str(refused.value)
    assert str(settings) in message and "'R'" in message, message
    assert "'restore'" in message and "'kill'" in message, message
    settings.write_text('[keys]\nkill = "ctrl+x"\nrestore = "ctrl+x,R"\n')
    with pytest.raises(UsageError, match=r"'ctrl\+x' would be bound to both"):
        make_app(None, replay=demo_replay)
    settings.write_text('[keys]\nkill = "R"\nrestore = "ctrl+r"\n')  # a swap that frees R is fine
    make_app(None, replay=demo_replay)
