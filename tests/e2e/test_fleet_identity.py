"""One machine's audit log holds every fleet its consoles ran: a restore on one fleet's ct129 is
not another fleet's (a new demo is not the last one), in the exporter and in Activity alike."""

from __future__ import annotations

import shutil

from sglconsole import config
from sglconsole.actions.audit import AuditLog
from sglconsole.exporter.restores import RestoreTimes
from sglconsole.tui.app import make_app
from tests.cli import cli
from tests.e2e.test_actions import ct129, state_dir  # noqa: F401 - a fixture
from tests.tui.helpers import shown


async def test_a_restore_belongs_to_its_own_fleet_not_to_a_host_of_the_same_name(
    fleet_factory,
    state_dir,  # noqa: F811 - the fixture imported above
    tmp_path,
):
    fleet = fleet_factory([ct129()])
    restored = cli("restore", "-c", str(fleet.config_path), "ct129:30000", "--yes")
    assert restored.returncode == 0, restored.stdout + restored.stderr
    this = config.load(fleet.config_path)
    (tmp_path / "other").mkdir()
    other_path = shutil.copy(fleet.config_path, tmp_path / "other" / "hosts.yaml")
    other = config.load(other_path)  # another fleet, with a ct129 of its own
    audit = AuditLog(state_dir / "sglconsole" / "actions.jsonl")
    assert ("ct129", 30000) in RestoreTimes(audit, fleet=this.identity)()
    assert RestoreTimes(audit, fleet=other.identity)() == {}
    for cfg, listed in ((this, True), (other, False)):
        app = make_app(cfg)
        async with app.run_test(size=(160, 48)) as pilot:
            await pilot.press("a")
            await pilot.pause(0.3)
            body = shown(app, "#activity-body")
            assert ("restore" in body and "ct129:30000" in body) is listed, (cfg.path, body)
