"""The server extension hands its ledger to the kernels and terminals it starts
(``MERCURY_LAB_HOME``), so their notebook edits reach the notebooks open in this Lab."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
from test_handlers import jp_server_config  # noqa: F401

from mercury_nb.contract.home import LAB_HOME_ENV


@pytest.fixture
def lab_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path / "lab-ledger"
    monkeypatch.setenv("MERCURY_HOME", str(home))
    monkeypatch.delenv(LAB_HOME_ENV, raising=False)  # restored after the test
    return home


async def test_the_server_extension_hands_its_ledger_to_what_it_starts(
        lab_home: Path, jp_serverapp: Any) -> None:
    assert os.environ[LAB_HOME_ENV] == str(lab_home)
