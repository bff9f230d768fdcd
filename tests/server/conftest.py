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
    """The scripted tasks of these tests run their check commands unasked (``auto``): they
    test other things than asking, and an ask would wait for an answer nobody sends. The
    approval tests (test_approval_handler.py) set ``edits`` and answer from the panel's API."""
    monkeypatch.setenv("MERCURY_PERMISSIONS", "auto")
