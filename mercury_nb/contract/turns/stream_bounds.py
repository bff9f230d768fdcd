"""How far one provider stream may run: its total deadline and its length cap, decided purely.

A per-read timeout does not bound a request: a server that trickles one byte every few
seconds never trips it, and one that ignores ``max_tokens`` streams forever. So every
stream also has a total **deadline** (``request_deadline_s``, by default a few per-read
timeouts) and a client-side **length cap** (``max_tokens`` × ``reply_chars_per_token``
characters of text, tool names and tool arguments). :func:`check_stream` decides, from the
time elapsed since the request was sent and the characters received, whether the stream
may go on; a cut is raised by the transport as a ``ProviderError`` of :func:`cut_kind`.

Both cuts are **interrupted**, never truncated. ``truncated`` means the provider itself
ended a sound reply at the limit it was asked for (``finish_reason: length``): its text is
kept as context and the model is asked to resume or be shorter, which presumes a server
that honours ``max_tokens``. A reply cut by the client is the opposite: the provider broke
the request's contract (no end within the deadline, more output than ``max_tokens`` allows),
its text is often a runaway repetition, and asking the same server to carry on would only
stream again. As interrupted, the cut text is dropped whole, the request is retried with
backoff, then the next provider is asked, then the task pauses honestly
(:mod:`mercury_nb.contract.escalation.provider_policy`). A deadline that passes before the
response began is a ``timeout`` (as a per-read timeout there is); after, ``interrupted``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import assert_never

from mercury_nb.contract.config import REQUEST_DEADLINE_TIMEOUTS, MercuryConfig

DEADLINE_MESSAGE = (
    "the reply did not finish within the {deadline:g}s request deadline "
    "(MERCURY_REQUEST_DEADLINE_S); the stream was cut"
)
TOO_LONG_MESSAGE = (
    "the reply ran past {max_chars} characters, more than max_tokens={max_tokens} allows "
    "(MERCURY_REPLY_CHARS_PER_TOKEN); the stream was cut"
)


@dataclass(frozen=True)
class StreamBounds:
    """The bounds of one stream: its total deadline and its length cap in characters."""

    deadline_s: float
    max_tokens: int
    chars_per_token: int

    def __post_init__(self) -> None:
        if not self.deadline_s > 0 or self.max_tokens < 1 or self.chars_per_token < 1:
            raise ValueError(f"unusable stream bounds: {self!r}")

    @property
    def max_chars(self) -> int:
        """Characters (text, tool names and arguments) one reply may stream at most."""
        return self.max_tokens * self.chars_per_token


@dataclass(frozen=True)
class ReplyLimits:
    """What a transport is configured with; the request's ``max_tokens`` completes it."""

    deadline_s: float
    chars_per_token: int

    @classmethod
    def of(cls, config: MercuryConfig) -> ReplyLimits:
        return cls(config.effective_request_deadline_s, config.reply_chars_per_token)

    @classmethod
    def default(cls, timeout_s: float) -> ReplyLimits:
        """The configured defaults for a transport built with only a per-read timeout."""
        per_token = MercuryConfig.model_fields["reply_chars_per_token"].default
        return cls(timeout_s * REQUEST_DEADLINE_TIMEOUTS, int(per_token))

    def bounds(self, max_tokens: int) -> StreamBounds:
        return StreamBounds(self.deadline_s, max(1, max_tokens), self.chars_per_token)


@dataclass(frozen=True)
class Within:
    """The stream may go on."""


@dataclass(frozen=True)
class DeadlinePassed:
    """The request's total deadline passed; ``began``: the response had begun (a 200)."""

    deadline_s: float
    began: bool


@dataclass(frozen=True)
class ReplyTooLong:
    """More characters arrived than ``max_tokens`` allows."""

    max_chars: int
    max_tokens: int


StreamCut = DeadlinePassed | ReplyTooLong
StreamCheck = Within | StreamCut


def check_stream(bounds: StreamBounds, elapsed_s: float, chars: int,
                 began: bool = True) -> StreamCheck:
    """Whether a stream ``elapsed_s`` seconds after its request was sent, having received
    ``chars`` characters, may go on. The deadline is checked first: a late and long reply
    is named by its lateness."""
    if elapsed_s >= bounds.deadline_s:
        return DeadlinePassed(bounds.deadline_s, began)
    if chars > bounds.max_chars:
        return ReplyTooLong(bounds.max_chars, bounds.max_tokens)
    return Within()


def cut_kind(cut: StreamCut) -> str:
    """The ``ProviderError.kind`` of a cut: ``timeout`` for a deadline before the response
    began, else ``interrupted`` (both transient: retried, then the next provider)."""
    match cut:
        case DeadlinePassed(began=False):
            return "timeout"
        case DeadlinePassed() | ReplyTooLong():
            return "interrupted"
        case _ as unreachable:
            assert_never(unreachable)


def cut_message(cut: StreamCut) -> str:
    """The message of a cut, naming the bound and the variable that sets it."""
    match cut:
        case DeadlinePassed(deadline_s=deadline):
            return DEADLINE_MESSAGE.format(deadline=deadline)
        case ReplyTooLong(max_chars=max_chars, max_tokens=max_tokens):
            return TOO_LONG_MESSAGE.format(max_chars=max_chars, max_tokens=max_tokens)
        case _ as unreachable:
            assert_never(unreachable)
