"""The drift pane shows a container's image and run options as a table apart from SGLang's flags,
with the note that says a tag was pulled again, and counts its differences with the rest."""

from __future__ import annotations

import re

from textual.theme import BUILTIN_THEMES

from sglconsole.core.drift import Report
from sglconsole.core.drift_container import compare_container, running_side, shm_bytes
from sglconsole.tui.paint.drift import container_part, summary
from sglconsole.tui.paint.palette import palette_of
from tests.core.test_drift_container import _captured, _profile_of
from tests.tui.helpers import plain


def test_the_drift_pane_shows_the_container_apart_and_counts_its_differences():
    captured = _captured("docker-host-network")
    edited = _profile_of(captured, image_id="sha256:" + "ef" * 32, shm_bytes=shm_bytes("16g"))
    report = Report(container=compare_container(edited, running_side(captured[0], "0.5.23")))
    palette = palette_of(BUILTIN_THEMES["textual-dark"])
    shown = "\n".join(plain(part, 100) for part in container_part(report, palette, 100))
    assert re.search(r"^≠\s+image id\s", shown, re.M) and re.search(
        r"^≠\s+--shm-size\s+16g", shown, re.M
    )
    assert re.search(r"^\s+--network\s+host\s+host", shown, re.M)  # the same: no mark
    assert "pulled (or built) again" in shown.replace("\n", " ")
    assert plain(summary(report, palette)).startswith("2 differences from the profile")
