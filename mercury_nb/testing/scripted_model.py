"""An in-process ChatModel playing a script of turns and faults; the scripted-model registry."""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import AsyncIterator, Iterator, Sequence
from contextlib import contextmanager

from mercury_nb.testing.script import (
    GATE_POLL_S,
    DropMidStream,
    Endless,
    HttpError,
    MalformedChunk,
    MalformedChunkError,
    OnExhausted,
    ScriptStep,
    Stall,
    Trickle,
    Turn,
    content_chunks,
    describe_request,
    describe_turns,
    fault_position,
    resolve_turn,
)
from mercury_nb.transport.model_registry import (
    SCRIPTED_PREFIX,
    lookup_scripted,
    register_model,
    unregister_model,
)
from mercury_nb.transport.protocol import (
    FinishChunk,
    ModelRequest,
    ProviderError,
    StreamChunk,
    TextChunk,
    UsageChunk,
)
from mercury_nb.transport.provider_errors import kind_for_status


class ScriptExhausted(AssertionError):
    """A scripted fake was asked for more turns than its script holds."""


class ScriptedModel:
    """Plays ``turns`` in order, one per ``stream()`` call, recording every request.

    Text and tool arguments are split into ``chunk_size`` pieces; faults raise or stop the
    stream as documented in :mod:`mercury_nb.testing.script`. Asking for more turns than
    scripted raises :class:`ScriptExhausted`, and :meth:`assert_complete` also reports it,
    so a loop that swallows the error still fails the test. With
    ``on_exhausted="repeat_last"`` the last turn is played again instead, and the requests
    it answered are kept in :attr:`repeated`.
    """

    def __init__(self, turns: Sequence[ScriptStep], name: str = "scripted/test",
                 on_exhausted: OnExhausted = "fail") -> None:
        self.name = name
        self.turns: tuple[ScriptStep, ...] = tuple(turns)
        self.on_exhausted: OnExhausted = on_exhausted
        self.requests: list[ModelRequest] = []
        self.overruns: list[ModelRequest] = []
        self.repeated: list[ModelRequest] = []
        """Requests beyond the script answered with the last turn (``repeat_last``)."""
        self._used = 0

    @property
    def remaining(self) -> int:
        """How many scripted turns have not been played yet."""
        return len(self.turns) - self._used

    def stream(self, request: ModelRequest) -> AsyncIterator[StreamChunk]:
        return self._play(request)

    async def _play(self, request: ModelRequest) -> AsyncIterator[StreamChunk]:
        self.requests.append(request)
        if self._used < len(self.turns):
            step = self.turns[self._used]
            self._used += 1
        elif self.on_exhausted == "repeat_last" and self.turns:
            self.repeated.append(request)
            step = self.turns[-1]
        else:
            self.overruns.append(request)
            raise ScriptExhausted(
                f"{self.name}: asked for turn {len(self.requests)} but only "
                f"{len(self.turns)} turn(s) were scripted. Request: {describe_request(request)}"
            )
        turn_number = len(self.requests) - 1  # a repeated turn's tool calls get fresh ids
        turn = resolve_turn(step, request)
        if isinstance(turn.fault, HttpError):
            fault = turn.fault
            raise ProviderError(
                provider=self.name,
                message=fault.message,
                status=fault.status,
                retry_after_s=fault.retry_after,
                kind=kind_for_status(fault.status),
            )
        chunks = content_chunks(turn, turn_number)
        strike = fault_position(turn, len(chunks))
        for position, chunk in enumerate(chunks):
            if position == strike:
                await self._strike(turn, position)
            if isinstance(turn.fault, Trickle) and strike is not None and position >= strike:
                await asyncio.sleep(turn.fault.byte_every_s)
            yield chunk
        if strike == len(chunks):
            await self._strike(turn, strike)
        if isinstance(turn.fault, Endless):
            for n in itertools.count(1):  # ignoring max_tokens: until the consumer stops
                await asyncio.sleep(turn.fault.every_s)
                yield TextChunk(f"{turn.fault.piece}{n} ")
        reason = turn.resolved_finish_reason
        if reason is not None:
            yield FinishChunk(reason)
        if turn.usage is not None:  # last, as OpenAI's include_usage chunk comes
            yield UsageChunk(*turn.usage)

    async def _strike(self, turn: Turn, position: int) -> None:
        match turn.fault:
            case DropMidStream():
                raise ConnectionError(f"{self.name}: connection dropped after {position} chunk(s)")
            case MalformedChunk():
                raise MalformedChunkError(f"{self.name}: malformed chunk after {position} chunk(s)")
            case Stall(seconds=seconds, until=None):
                await asyncio.sleep(seconds)
            case Stall(seconds=seconds) as stall:  # gated: ends when its file appears
                deadline = asyncio.get_running_loop().time() + seconds
                while not stall.ended() and asyncio.get_running_loop().time() < deadline:
                    await asyncio.sleep(min(GATE_POLL_S, seconds))
            case _:
                pass

    def assert_complete(self) -> None:
        """Raise AssertionError if scripted turns went unused or the script was overrun."""
        problems = []
        if self.remaining:
            unused = self.turns[self._used :]
            problems.append(
                f"{self.remaining} scripted turn(s) unused:\n"
                + describe_turns(unused, first_number=self._used + 1)
            )
        if self.overruns:
            problems.append(
                f"{len(self.overruns)} request(s) beyond the script, first: "
                + describe_request(self.overruns[0])
            )
        if problems:
            raise AssertionError(f"{self.name}: " + "\n".join(problems))

    def __repr__(self) -> str:
        return f"ScriptedModel({self.name!r}, turns={len(self.turns)}, used={self._used})"


@contextmanager
def scripted(turns: Sequence[ScriptStep], name: str = "scripted/test") -> Iterator[ScriptedModel]:
    """A scripted model that must be played to the end: asserts complete on a clean exit."""
    model = ScriptedModel(turns, name=name)
    yield model
    model.assert_complete()


# --- registry: lets notebooks and the CLI pick a scripted model by name ---------------

def _key(name: str) -> str:
    key = name.removeprefix(SCRIPTED_PREFIX)
    if not key:
        raise ValueError(f"a scripted model needs a name after {SCRIPTED_PREFIX!r}")
    return key


def register_scripted_model(
    name: str, model_or_turns: ScriptedModel | Sequence[ScriptStep]
) -> ScriptedModel:
    """Register a model (or a script) as ``scripted/<name>``; replaces an earlier one.

    A script becomes a new :class:`ScriptedModel` named ``scripted/<name>``; a model is
    registered as it is."""
    key = _key(name)
    if isinstance(model_or_turns, ScriptedModel):
        model = model_or_turns
    else:
        model = ScriptedModel(model_or_turns, name=SCRIPTED_PREFIX + key)
    register_model(SCRIPTED_PREFIX + key, model)  # the one registry, in transport
    return model


def get_scripted_model(name: str) -> ScriptedModel:
    """The model registered as ``name`` (with or without the ``scripted/`` prefix)."""
    model = lookup_scripted(SCRIPTED_PREFIX + _key(name))
    if not isinstance(model, ScriptedModel):
        raise LookupError(f"{name!r} is registered, but not as a scripted model")
    return model


def unregister_scripted_model(name: str) -> None:
    """Forget a registered scripted model (no error if it was not registered)."""
    unregister_model(SCRIPTED_PREFIX + _key(name))


def is_scripted_name(name: str) -> bool:
    return name.startswith(SCRIPTED_PREFIX)
