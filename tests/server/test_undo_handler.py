"""POST /mercury/api/tasks/{id}/undo in a real jupyter_server: a per-file revert, then the
whole task with a file the user edited left and named, then the undo undone."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from test_handlers import jp_server_config, on_server_loop  # noqa: F401
from tornado.httpclient import HTTPClientError
from undo_scripts import BEFORE, COMMAND, LEFT_NOTES, changing_turns, files, make_workspace

from mercury_nb.testing import register_scripted_model, unregister_scripted_model

Fetch = Callable[..., Awaitable[Any]]
MODEL = "undo-api"


@pytest.fixture
def model() -> Iterator[str]:
    register_scripted_model(MODEL, changing_turns())
    yield f"scripted/{MODEL}"
    unregister_scripted_model(MODEL)


async def call(fetch: Fetch, *parts: str, body: Any = None, expect: int = 200) -> Any:
    method = "GET" if body is None else "POST"
    raw = None if body is None else json.dumps(body)
    try:
        response = await fetch("mercury", "api", *parts, method=method, body=raw)
    except HTTPClientError as error:
        assert error.code == expect, (error.code, error.response and error.response.body)
        assert error.response is not None
        return json.loads(error.response.body)
    assert response.code == expect, response.body
    return json.loads(response.body)


@on_server_loop
async def test_revert_one_file_then_undo_the_task_then_the_undo(
    jp_fetch: Fetch, jp_root_dir: Path, model: str
) -> None:
    folder = jp_root_dir / "proj"
    make_workspace(folder)
    started = await call(jp_fetch, "tasks", body={"task": "Change the files.", "model": model,
                                                   "workdir": "proj"}, expect=201)
    task_id = started["task_id"]
    for _ in range(300):
        if (await call(jp_fetch, "tasks", task_id))["task"]["status"] != "running":
            break
        await asyncio.sleep(0.1)
    end = files(folder)
    assert "new.py" in end and "old.txt" not in end

    one = await call(jp_fetch, "tasks", task_id, "undo", body={"path": "keep.py"})
    assert one["restored"] == ["keep.py"] and one["left"] == []
    assert files(folder) == {**end, "keep.py": BEFORE["keep.py"]}

    (folder / "notes.md").write_text("my own notes\n")
    whole = await call(jp_fetch, "tasks", task_id, "undo", body={})
    assert sorted(whole["restored"]) == ["new.py", "old.txt"]  # keep.py was back already
    assert whole["left"] == [{"path": "notes.md", "why": LEFT_NOTES}]
    assert whole["not_undoable"] == [f"the command it ran: {COMMAND}"]
    assert files(folder) == {**BEFORE, "notes.md": "my own notes\n"}

    again = await call(jp_fetch, "tasks", whole["undo_id"], "undo", body={})
    assert sorted(again["restored"]) == ["new.py", "old.txt"]
    assert files(folder) == {**end, "keep.py": BEFORE["keep.py"], "notes.md": "my own notes\n"}


@on_server_loop
async def test_undo_of_an_unknown_task_is_404(jp_fetch: Fetch) -> None:
    reply = await call(jp_fetch, "tasks", "abcdef123456", "undo", body={}, expect=404)
    assert "abcdef123456" in reply["error"]


@on_server_loop
async def test_an_unknown_field_is_400(jp_fetch: Fetch) -> None:
    await call(jp_fetch, "tasks", "abcdef123456", "undo", body={"paths": 1}, expect=400)
