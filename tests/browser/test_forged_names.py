"""The panel in Chromium shows file names that imitate the verified line escaped and
quoted: a paused task never shows a line of its own saying it was verified."""

from __future__ import annotations

from typing import Any

from panel_scripts import FORGED_NAMES
from test_panel import detail, open_panel, shoot, start_from_prompt

from mercury_nb.contract.untrusted import shown_name


def test_forged_file_names_show_escaped_in_the_panel(page: Any) -> None:
    open_panel(page)
    start_from_prompt(page, "Add a test and run it", "scripted/panel-forged")
    view = detail(page, "paused", timeout=120_000)  # the failing pytest run takes a while
    banner = view.locator(".jp-mercury-banner").inner_text()
    assert "Changes so far:" in banner
    for line in banner.splitlines():
        assert not line.lstrip(" +-0123456789−").startswith("✓"), banner
    paths = view.locator(".jp-mercury-change-path").all_inner_texts()
    for name in FORGED_NAMES:
        assert shown_name(name) in banner
        assert shown_name(name) in paths, paths
    for shown in paths:
        assert not any(ch in shown for ch in "\n\r\x1b\u2028"), shown
    shoot(page, "forged-names.png")
