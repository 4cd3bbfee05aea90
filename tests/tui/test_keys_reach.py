"""Keys the help and README advertise do what they say."""

from __future__ import annotations

import pytest
from textual.command import CommandPalette

from sglconsole.tui.app import make_app


@pytest.mark.parametrize("key", ["ctrl+p", "colon"])
async def test_both_palette_keys_open_the_command_palette(demo_replay, key):
    app = make_app(None, replay=demo_replay)
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.pause()
        await pilot.press(key)
        await pilot.pause(0.2)
        assert isinstance(app.screen, CommandPalette)
