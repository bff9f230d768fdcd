"""pytest fixtures for the fakes: scripted models and loopback servers checked on teardown."""

from __future__ import annotations

from collections.abc import Callable, Generator, Iterator, Mapping, Sequence
from typing import Any

import pytest

from mercury_nb.testing.loopback_server import LoopbackServer
from mercury_nb.testing.script import ScriptStep
from mercury_nb.testing.scripted_model import (
    SCRIPTED_PREFIX,
    ScriptedModel,
    register_scripted_model,
    unregister_scripted_model,
)

_CALL_FAILED = pytest.StashKey[bool]()


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(
    item: pytest.Item, call: pytest.CallInfo[None]
) -> Generator[None, Any, Any]:
    report = yield
    if report.when == "call" and report.failed:
        item.stash[_CALL_FAILED] = True
    return report


def _check_all(
    request: pytest.FixtureRequest, fakes: Sequence[ScriptedModel | LoopbackServer]
) -> None:
    """Assert every fake was played to the end, unless the test body already failed."""
    if request.node.stash.get(_CALL_FAILED, False):
        return
    problems = []
    for fake in fakes:
        try:
            fake.assert_complete()
        except AssertionError as error:
            problems.append(str(error))
    if problems:
        pytest.fail("\n".join(problems), pytrace=False)


@pytest.fixture
def scripted_model(request: pytest.FixtureRequest) -> Iterator[Callable[..., ScriptedModel]]:
    """Factory: ``scripted_model(turns, name=..., register="demo")`` -> ScriptedModel.

    ``register`` also makes it ``scripted/<register>`` for ``resolve_model`` until teardown.
    At teardown every model made here must have played all its turns and no more."""
    made: list[ScriptedModel] = []
    registered: list[str] = []

    def make(
        turns: Sequence[ScriptStep], name: str | None = None, *, register: str | None = None
    ) -> ScriptedModel:
        default = SCRIPTED_PREFIX + register if register else "scripted/test"
        model = ScriptedModel(turns, name=name or default)
        if register:
            register_scripted_model(register, model)
            registered.append(register)
        made.append(model)
        return model

    yield make
    for key in registered:
        unregister_scripted_model(key)
    _check_all(request, made)


@pytest.fixture
def loopback_server(request: pytest.FixtureRequest) -> Iterator[Callable[..., LoopbackServer]]:
    """Factory: ``loopback_server(script)`` -> a started LoopbackServer.

    At teardown each server is stopped, then must have played all its turns and no more."""
    made: list[LoopbackServer] = []

    def make(
        script: Sequence[ScriptStep] | Mapping[str, Sequence[ScriptStep]],
        routes: Mapping[str, Any] | None = None,
    ) -> LoopbackServer:
        server = LoopbackServer(script, routes).start()
        made.append(server)
        return server

    yield make
    for server in made:
        server.stop()
    _check_all(request, made)


@pytest.fixture(scope="session")
def litellm_module() -> Any:
    """litellm, imported once per test session through the silenced lazy loader (~3 s)."""
    from mercury_nb.transport.litellm_loader import import_litellm

    return import_litellm()
