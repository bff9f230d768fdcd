"""pytest-jupyter's server fixtures (jp_fetch, jp_ws_fetch, jp_serverapp, …) for this folder
only: registering the plugin with ``pytest_plugins`` would make its autouse event-loop
fixture and its hooks apply to the whole suite."""

from __future__ import annotations

from typing import Any

import pytest
import pytest_jupyter.jupyter_server as _jupyter_server


def _is_fixture(value: Any) -> bool:
    return type(value).__name__ in ("FixtureFunctionDefinition", "FixtureFunctionMarker") or (
        hasattr(value, "_pytestfixturefunction"))


globals().update({name: value for name, value in vars(_jupyter_server).items()
                  if not name.startswith("pytest_") and _is_fixture(value)})


@pytest.fixture(autouse=True)
def _panel_tasks_run_commands_unasked(monkeypatch: pytest.MonkeyPatch) -> None:
    """The panel cannot approve yet: its scripted tasks run their commands in ``auto``."""
    monkeypatch.setenv("MERCURY_PERMISSIONS", "auto")
