"""Parts of the one config model: the context window (windows, reply caps, tool sets,
compaction), the read budgets (how much of a file is ever read) and the kernel's bounds."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

MAX_STEPS_RANGE = (1, 1000)
"""The bounds of ``max_steps``, the config field's and so every front end's (the flags, the
environment, traitlets, the panel's POSTs; the panel's own field checks the same upper bound,
``MAX_STEPS_LIMIT``, which a test holds to this one)."""
STEPS_RANGE_WORDS = f"a whole number from {MAX_STEPS_RANGE[0]} to {MAX_STEPS_RANGE[1]}"
"""How a refusal of an out-of-range ``max_steps`` says what it must be."""


class ContextLimits(BaseModel):
    """The fields of :class:`~mercury_nb.contract.config.MercuryConfig` that size a request
    to the model's context window; set and documented like every other field
    (``MERCURY_<FIELD>``), only kept in a module of their own."""

    model_config = ConfigDict(frozen=True, extra="forbid", allow_inf_nan=False)

    context_window: int | None = Field(default=None, ge=1024)
    """Context window in tokens for models litellm does not know. Without it, an
    OpenAI-compatible server is asked (llama.cpp ``/props`` ``n_ctx``, vLLM ``/v1/models``
    ``max_model_len``); if it does not say, ``default_context_window`` is assumed."""

    default_context_window: int = Field(default=8192, ge=1024)
    """The conservative window assumed for a model behind ``api_base`` whose window neither
    litellm, ``MERCURY_CONTEXT_WINDOW`` nor the server tells (a provider's overflow error
    that names the real window replaces it)."""

    output_window_fraction: float = Field(default=0.25, gt=0, le=0.5, allow_inf_nan=False)
    """``max_tokens`` is at most this fraction of the known or assumed context window."""

    reply_max_tokens: int = Field(default=4096, ge=256)
    """``max_tokens`` of one reply when the window is unknown or at most ``reply_cap_window``
    (a local server's), so one rambling reply ends in bounded time."""

    reply_chars_per_token: int = Field(default=16, ge=1)
    """Client-side cap of one streamed reply: more than ``max_tokens`` × this many characters
    (text, tool names and arguments) is cut as interrupted, so a server that ignores
    ``max_tokens`` cannot stream forever (a token is about 4 characters)."""

    reply_cap_window: int = Field(default=32768, ge=1024)
    """Larger windows (cloud models) keep ``max_output_tokens``, cut only by the fraction."""

    tool_set: Literal["auto", "full", "compact"] = "full"
    """Tool definitions sent: ``full``, ``compact`` (short) or ``auto`` (full if it fits well,
    else compact). A window too small for the full set fails naming the compact set's size."""

    tool_result_window_fraction: float = Field(default=0.15, gt=0, le=1, allow_inf_nan=False)
    """One tool result holds at most this fraction of the usable prompt budget; larger
    results are cut at the source (head and tail, or a page of lines for ``read_file``)."""

    tool_result_room_fraction: float = Field(default=0.25, gt=0, le=1, allow_inf_nan=False)
    """...and at most this fraction of the room the tool definitions, the system prompt and
    the task leave, so a small window (2,048 tokens) still holds a few steps."""

    context_overflow_retries: int = Field(default=3, ge=0)
    """Times one step is shrunk and sent again after a provider's context-overflow error
    before the task pauses honestly."""

    memory_limit_mb: int | None = Field(default=None, ge=16)
    """Kernel RSS above which the memory governor compacts the conversation."""

    compaction_keep_recent: int = Field(default=8, ge=1)
    """Newest messages never compacted."""

    compaction_min_chars: int = Field(default=8192, ge=256)
    """Older messages longer than this are compacted to head + tail."""

    compaction_head_chars: int = Field(default=4096, ge=64)
    """Characters kept from the start of a compacted message."""

    compaction_tail_chars: int = Field(default=4096, ge=64)
    """Characters kept from the end of a compacted message."""


class ReadLimits(BaseModel):
    """The fields of :class:`~mercury_nb.contract.config.MercuryConfig` that bound how much of
    a file the product reads, set before a byte is read (``MERCURY_<FIELD>``)."""

    model_config = ConfigDict(frozen=True, extra="forbid", allow_inf_nan=False)

    undo_max_bytes: int = Field(default=64_000_000, ge=0)
    """Most bytes of "before" content one task keeps (under ``home``) so it can be undone;
    a file beyond it is "too large to keep": undo names it instead of restoring it."""

    read_file_max_scan_bytes: int = Field(default=256_000_000, ge=1024)
    """Most bytes of one file ``read_file`` reads through (to reach an offset, to count the
    lines left); beyond them it says so instead of reading on."""

    file_read_max_bytes: int = Field(default=16_000_000, ge=1024)
    """Largest file read whole (``edit_file``, the notebook tools, the read-back of changed
    files); a larger one is refused by its size before a byte of it is read."""

    snapshot_max_hash_bytes: int = Field(default=256_000_000, ge=1024)
    """Files larger than this are not read at all by change summaries: compared by size and
    modification time only."""


class KernelLimits(BaseModel):
    """The fields of :class:`~mercury_nb.contract.config.MercuryConfig` that bound what a task
    from a ``%%mercury`` cell sees of, and does in, the user's kernel (``inspect_variables``,
    ``@name``, ``run_in_kernel``), set like every other field (``MERCURY_<FIELD>``)."""

    model_config = ConfigDict(frozen=True, extra="forbid", allow_inf_nan=False)

    kernel_summary_max_chars: int = Field(default=12_000, ge=500)
    """Most characters the summaries of the kernel's variables take in all (one
    ``inspect_variables`` result, or the ``@name`` attachments of a task's first request);
    a tool result is cut further to the model's context budget."""

    kernel_repr_chars: int = Field(default=200, ge=20)
    """Characters of one variable's bounded repr (built by a known-safe summary, never by
    the value's own ``__repr__``)."""

    kernel_head_rows: int = Field(default=5, ge=0)
    """First rows of a DataFrame (or values of a Series) shown in its summary."""

    kernel_max_columns: int = Field(default=30, ge=1)
    """Columns of a DataFrame named, with their dtypes, in its summary (and shown in its
    first rows)."""

    kernel_code_timeout_s: float = Field(default=60.0, gt=0)
    """Time limit of one ``run_in_kernel`` call; then the code is interrupted like a Stop."""

    kernel_stop_grace_s: float = Field(default=1.5, gt=0, le=10)
    """How long an interrupted ``run_in_kernel`` (a Stop, its time limit) waits for the code
    to end before saying it could not be interrupted (native code)."""

    kernel_output_max_chars: int = Field(default=8000, ge=200)
    """Characters of stdout, of stderr and of the traceback a ``run_in_kernel`` result keeps
    each (head and tail)."""


class StreamLimits(BaseModel):
    """The fields of :class:`~mercury_nb.contract.config.MercuryConfig` that bound how the
    model's streamed text is recorded for live watchers (the panel), ``MERCURY_<FIELD>``."""

    model_config = ConfigDict(frozen=True, extra="forbid", allow_inf_nan=False)

    stream_record_ms: int = Field(default=250, ge=10)
    """How long the model's streamed text gathers before it is written to the ledger as one
    ``text-delta`` event (the panel shows it live; at most one such write per interval)."""

    stream_record_chars: int = Field(default=16_000, ge=256)
    """Most characters of one step's streamed text recorded for live watchers; the rest is
    shown with the final answer only."""


class SpendLimits(BaseModel):
    """The fields of :class:`~mercury_nb.contract.config.MercuryConfig` that cap what a task
    spends (``--max-cost``, ``--max-tokens``; ``MERCURY_<FIELD>``). They count every model of
    the chain and every sub-agent of the task, across its continues; reaching one pauses the
    task before its next request, resumable with a higher budget."""

    model_config = ConfigDict(frozen=True, extra="forbid", allow_inf_nan=False)

    max_cost_usd: float | None = Field(default=None, gt=0, allow_inf_nan=False)
    """Estimated USD (from the price table) the task may spend before it pauses. Tokens of a
    model without a known price (a local one) are not in it: they count as tokens only."""

    max_tokens: int | None = Field(default=None, ge=1)
    """Tokens (prompt and completion, as the providers report them) the task may use before
    it pauses; not ``max_output_tokens``, which caps one reply."""
