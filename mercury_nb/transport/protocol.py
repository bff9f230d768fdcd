"""The chat-model seam: the request the loop sends and the chunks a model streams back."""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from mercury_nb.contract.vocabulary import ToolChoice


@dataclass(frozen=True)
class ModelRequest:
    """One streamed chat-completion request, in OpenAI's message and tool format."""

    messages: tuple[dict[str, Any], ...]
    tools: tuple[dict[str, Any], ...] = ()
    tool_choice: ToolChoice = "auto"
    max_tokens: int = 32768


@dataclass(frozen=True)
class TextChunk:
    """A piece of the assistant's visible text."""

    text: str


@dataclass(frozen=True)
class ToolCallChunk:
    """A piece of one tool call; ``index`` ties the pieces of a call together."""

    index: int
    id: str | None = None
    name: str | None = None
    arguments: str = ""


@dataclass(frozen=True)
class FinishChunk:
    """The provider's finish reason, exactly as sent (``None`` if it sent none)."""

    reason: str | None


@dataclass(frozen=True)
class UsageChunk:
    """Token usage, when the provider reports it."""

    prompt_tokens: int = 0
    completion_tokens: int = 0


StreamChunk = TextChunk | ToolCallChunk | FinishChunk | UsageChunk


@runtime_checkable
class ChatModel(Protocol):
    """Anything that streams a chat completion: litellm, a scripted fake.

    ``stream`` raises :class:`ProviderError` when the request fails before any chunk;
    any exception after the first chunk means the stream was interrupted. A stream that
    ends without a :class:`FinishChunk` was interrupted too.
    """

    name: str

    def stream(self, request: ModelRequest) -> AsyncIterator[StreamChunk]: ...


@dataclass
class ProviderError(Exception):
    """A provider refused or failed a request; carries what the retry policy needs."""

    provider: str
    message: str
    status: int | None = None
    retry_after_s: float | None = None
    kind: str = "error"
    details: dict[str, Any] = field(default_factory=dict)
    masked: bool = False
    """``message`` was masked where it came in (the transport: its key and every env secret,
    :func:`~mercury_nb.transport.provider_errors.redact_keys`): the task shows it as it is."""

    def __str__(self) -> str:
        status = f" (HTTP {self.status})" if self.status is not None else ""
        return f"{self.provider}: {self.kind}{status}: {self.message}"
