"""Assembles streamed text and tool-call deltas into one model step's reply."""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from mercury_nb.contract.turns.stream_ending import StreamEnding, classify_stream
from mercury_nb.contract.untrusted import clean, clean_json


@dataclass(frozen=True)
class AssembledToolCall:
    """One tool call as the model sent it; ``arguments`` is raw, maybe malformed, JSON."""

    id: str
    name: str
    arguments: str


@dataclass(frozen=True)
class StepReply:
    """Everything one streamed model step produced, and how its stream ended."""

    text: str
    tool_calls: tuple[AssembledToolCall, ...]
    finish_reason: str | None
    error: str | None
    ending: StreamEnding

    @property
    def complete(self) -> bool:
        return self.ending is StreamEnding.COMPLETE


@dataclass(frozen=True)
class _PartialCall:
    id: str = ""
    name: str = ""
    arguments: str = ""


@dataclass(frozen=True)
class StreamAssembly:
    """Immutable accumulator; each ``add_*`` returns a new assembly."""

    text: str = ""
    calls: tuple[tuple[int, _PartialCall], ...] = ()
    finish_reason: str | None = None
    finished: bool = False
    chunks: int = 0
    _order: tuple[int, ...] = field(default=())

    def add_text(self, text: str) -> StreamAssembly:
        return replace(self, text=self.text + text, chunks=self.chunks + 1)

    def add_tool_delta(
        self, index: int, call_id: str | None, name: str | None, arguments: str
    ) -> StreamAssembly:
        calls = dict(self.calls)
        order = self._order
        part = calls.get(index)
        if part is None:
            part = _PartialCall()
            order = (*order, index)
        part = _PartialCall(
            id=part.id or (call_id or ""),
            name=part.name or (name or ""),
            arguments=part.arguments + arguments,
        )
        calls[index] = part
        return replace(self, calls=tuple(calls.items()), _order=order, chunks=self.chunks + 1)

    def add_finish(self, reason: str | None) -> StreamAssembly:
        return replace(self, finish_reason=reason, finished=True, chunks=self.chunks + 1)

    def reply(self, error: BaseException | str | None = None, step: int = 0) -> StepReply:
        """The assembled reply. A stream with no finish chunk is interrupted. Everything the
        model sent goes through the one sanitizer (:mod:`mercury_nb.contract.untrusted`): no
        lone surrogate reaches a hash, the ledger or a view, nor a tool through its JSON."""
        calls = dict(self.calls)
        tool_calls = tuple(
            AssembledToolCall(
                id=clean(calls[i].id) or f"call_{step}_{n}",
                name=clean(calls[i].name),
                arguments=clean_json(calls[i].arguments),
            )
            for n, i in enumerate(self._order)
        )
        err_text = (
            None if error is None else clean(error if isinstance(error, str) else _describe(error))
        )
        marker: BaseException | None = None
        if err_text is not None:
            marker = RuntimeError(err_text)
        reason = self.finish_reason if self.finished else None
        return StepReply(
            text=clean(self.text),
            tool_calls=tool_calls,
            finish_reason=reason,
            error=err_text,
            ending=classify_stream(reason, marker),
        )


def is_empty_reply(reply: StepReply) -> bool:
    """A complete reply with no tool call and no visible text (nothing, or only whitespace):
    the model answered nothing. It is a failed step, never an answer (see agent/step.py)."""
    return reply.complete and not reply.tool_calls and not reply.text.strip()


def produced_nothing(reply: StepReply) -> bool:
    """An unfinished reply that streamed neither text nor a tool call."""
    return not reply.complete and not reply.tool_calls and not reply.text


def _describe(error: BaseException) -> str:
    text = str(error).strip()
    return f"{type(error).__name__}: {text}" if text else type(error).__name__
