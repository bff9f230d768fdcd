"""The one session lifecycle: a stopped step ends aborted and the stop counts as handled."""

from __future__ import annotations

import asyncio
from pathlib import Path

from mercury_nb.agent.lifecycle import until_ending
from mercury_nb.agent.session import TaskSession
from mercury_nb.contract.config import MercuryConfig
from mercury_nb.contract.endings import Aborted, Ending, Failed


async def test_a_cancelled_step_ends_aborted_and_uncancels(tmp_path: Path) -> None:
    session = TaskSession.start("Do it.", MercuryConfig(workdir=tmp_path), "t1")
    started = asyncio.Event()

    async def step() -> Ending:
        started.set()
        await asyncio.Event().wait()  # until stopped
        raise AssertionError("not reached")

    async def run() -> tuple[Ending, int]:
        ending = await until_ending(step, session)
        current = asyncio.current_task()
        assert current is not None
        return ending, current.cancelling()

    task = asyncio.create_task(run())
    await started.wait()
    task.cancel()
    ending, cancelling = await task
    assert ending == Aborted(by="stop")
    assert cancelling == 0  # handled: a later await in the same task is not cancelled again
    assert session.last_verdict == "aborted"


async def test_an_ending_passes_through(tmp_path: Path) -> None:
    session = TaskSession.start("Do it.", MercuryConfig(workdir=tmp_path), "t2")

    async def step() -> Ending:
        return Failed("no")

    assert await until_ending(step, session) == Failed("no")
    assert session.last_verdict != "aborted"
