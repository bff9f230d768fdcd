"""A check run so that its exit code is not the evidence gets a plain explanation in the
forced verification round, and the check run properly then completes the task."""

from __future__ import annotations

from pathlib import Path

import pytest

from mercury_nb.agent.task import run_new_session
from mercury_nb.contract.config import MercuryConfig
from mercury_nb.testing import Turn, call

TEST_PY = "def test_ok():\n    assert True\n"


@pytest.mark.parametrize(
    ("uncounted", "told"),
    [
        pytest.param("python -m pytest -q test_ok.py 2>&1 | tail -5",
                     "it was piped into `tail`, so the exit code was `tail`'s",
                     id="piped"),
        pytest.param("python -m pytest --co -q test_ok.py",
                     "`--co` only lists or prints, nothing was checked", id="collect-only"),
        pytest.param("true || python -m pytest -q test_ok.py",
                     "it was on the right-hand side of `||`, so it may never have run",
                     id="right-of-or"),
    ],
)  # fmt: skip
async def test_the_forced_round_explains_an_uncounted_check(
    tmp_path: Path, scripted_model, uncounted: str, told: str
) -> None:
    model = scripted_model([
        Turn(tool_calls=(call("create_file", path="test_ok.py", content=TEST_PY),)),
        Turn(tool_calls=(call("run_command", command=uncounted),)),
        Turn(text="Tests pass."),
        Turn(tool_calls=(call("run_command", command="python -m pytest -q test_ok.py"),)),
        Turn(text="Verified: the test passes."),
    ])
    outcome = await run_new_session("Add a passing test in test_ok.py",
                                    MercuryConfig(permissions="auto",
                                                  workdir=tmp_path, retry_base_s=0.0), model=model)
    assert outcome.status == "completed", outcome.banner
    forced = str(model.requests[3].messages[-1]["content"])
    assert forced.startswith("[SYSTEM: VERIFY]")
    assert f"Your run `{uncounted}` did not count as evidence: {told}" in forced
