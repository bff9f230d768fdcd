"""The one documented configuration model: every threshold, with MERCURY_* env overrides."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, ConfigDict, Field, SecretStr, ValidationInfo, field_validator

from mercury_nb.contract import config_limits as limits
from mercury_nb.contract.config_commands import CommandSettings
from mercury_nb.contract.home import default_home, home_path
from mercury_nb.contract.live_edit import LiveEditLimits

ENV_PREFIX = "MERCURY_"
REQUEST_DEADLINE_TIMEOUTS = 3
"""Per-read timeouts in the default total deadline of one request."""
_NO_EMPTY = frozenset({"home", "workdir"})
"""Fields whose empty variable is an error, not "unset": ``MERCURY_HOME=""`` must not
silently mean ``~/.mercury``."""


class MercuryConfig(limits.ContextLimits, limits.ReadLimits, limits.KernelLimits,
                    limits.StreamLimits, limits.SpendLimits, CommandSettings, LiveEditLimits):
    """Every knob and threshold of mercury-nb in one place.

    Each field can be overridden by an environment variable named ``MERCURY_`` plus the
    field name in upper case (``max_steps`` -> ``MERCURY_MAX_STEPS``), by the traitlets
    config of the IPython extension, and by magic / CLI flags. Precedence, lowest first:
    defaults, traitlets, environment, flags.
    """

    # Each field's docstring documents it (tests check every field has one). Not loaded as
    # pydantic descriptions: reading the source for them costs every process ~0.1 s at start.
    model_config = ConfigDict(frozen=True, extra="forbid", allow_inf_nan=False)

    model: str = "gpt-4o-mini"
    """The first model of the chain, in litellm's naming (``provider/model``).
    ``scripted/<name>`` selects a scripted model registered with ``mercury_nb.testing``."""

    fallbacks: tuple[str, ...] = ()
    """Further models tried in order when the first one fails (``MERCURY_FALLBACKS``,
    a comma-separated list)."""

    api_base: str | None = None
    """Base URL of an OpenAI-compatible endpoint (vLLM, llama.cpp, Ollama's ``/v1``, LM
    Studio…); models there are streamed over plain HTTP, other providers get it through
    litellm."""

    api_key: SecretStr | None = None
    """API key sent to every model of the chain (before the provider's own variable, such as
    ``OPENAI_API_KEY``). Never printed, logged or stored."""

    workdir: Path = Field(default_factory=Path.cwd)
    """Workspace root. Every tool path is confined to it. Default: the kernel's cwd."""

    mode: Literal["execute", "chat"] = "execute"
    """``execute`` builds things and is held to the completion contract;
    ``chat`` answers questions and never triggers forced rounds."""

    max_steps: int = Field(default=75, ge=limits.MAX_STEPS_RANGE[0], le=limits.MAX_STEPS_RANGE[1])
    """Model steps (one streamed reply each) per step budget."""

    max_output_tokens: int = Field(default=32768, ge=256)
    """``max_tokens`` asked of the provider; deliberately above native limits."""

    request_timeout_s: float = Field(default=600.0, gt=0)
    """Timeout of one model request (the HTTP client's or litellm's)."""

    request_deadline_s: float | None = Field(default=None, gt=0)
    """Total time one model request may take, from sending it to its last byte, however
    steadily bytes trickle in; then it is cut as interrupted. Default: 3 × the timeout."""

    command_timeout_s: float = Field(default=120.0, gt=0)
    """Default timeout of ``run_command`` when the model does not give one."""

    max_command_timeout_s: float = Field(default=1800.0, gt=0)
    """Upper bound on any ``timeout_s`` the model asks for."""

    shutdown_grace_s: float = Field(default=10.0, gt=0)
    """How long the CLI, on SIGTERM, SIGHUP or SIGINT, waits for its running task to end
    ``aborted`` before it exits anyway."""

    kernel_shutdown_grace_s: float = Field(default=4.0, gt=0)
    """How long a kernel's shutdown or restart request waits for its running tasks to end
    ``aborted`` (jupyter_client signals a kernel that is not gone after 5 s)."""

    command_output_head_chars: int = Field(default=6000, ge=100)
    """Characters kept from the start of a command's output."""

    command_output_tail_chars: int = Field(default=6000, ge=100)
    """Characters kept from the end of a command's output."""

    read_file_max_chars: int = Field(default=200_000, ge=1000)
    """Largest file content ``read_file`` returns whole; larger files come head + tail."""

    list_dir_max_entries: int = Field(default=500, ge=10)
    """Most entries ``list_dir`` returns."""

    ui_max_updates_per_s: float = Field(default=10.0, gt=0)
    """Ceiling on live widget updates per second, however fast the stream runs."""

    snapshot_max_file_bytes: int = Field(default=2_000_000, ge=1024)
    """Files larger than this are compared by size and hash only in change summaries."""

    snapshot_max_files: int = Field(default=20_000, ge=10)
    """Most files a content snapshot records."""

    # --- completion contract -------------------------------------------------------
    max_auto_continuations: int = Field(default=6, ge=0)
    """Fresh step budgets granted automatically after ``steps-exhausted``."""

    max_truncation_rounds: int = Field(default=6, ge=0)
    """Resume rounds after a reply cut by the output-token limit."""

    max_prose_truncation_rounds: int = Field(default=1, ge=0)
    """Of those, rounds after a cut *prose* reply (asked to be shorter, never to go on)."""

    min_output_tokens: int = Field(default=4096, ge=256)
    """Floor for halving ``max_tokens`` when a provider rejects the asked value."""

    sectioned_write_lines: int = Field(default=80, ge=10)
    """Lines per section demanded after a file write was cut by the output limit."""

    task_restate_chars: int = Field(default=200, ge=20)
    """Characters of the task restated in the step-budget nudge."""

    resume_listed_files: int = Field(default=20, ge=1)
    """Changed files named in the resume turn a paused task gets on "continue"."""

    blocker_chars: int = Field(default=120, ge=20)
    """Characters of the last failed mutating result quoted as the blocker."""

    notebook_timeout_s: float = Field(default=120.0, gt=0)
    """Per-cell timeout when a changed notebook is executed as evidence, or by run_cells."""

    ask_user_timeout_s: float = Field(default=30.0, ge=0)
    """Headless or ``--yes`` runs take the recommended ``ask_user`` option after this."""

    auto_yes: bool = False
    """Take the recommended ``ask_user`` option without waiting (``--yes``)."""

    # --- escalation -------------------------------------------------------------------
    guard_rounds: int = Field(default=5, ge=1)
    """Narration-guard rounds before the wake-up call."""

    guard_rounds_total: int = Field(default=10, ge=1)
    """Narration-guard rounds in all, wake-up cycle included, before an honest pause."""

    ignored_forcing_limit: int = Field(default=2, ge=1)
    """Forced tool calls answered with prose and no call after which a model that never
    made a tool call is taken to have no tool support (the task then fails, naming the fix)."""

    grounding_entries: int = Field(default=30, ge=1)
    """Workspace entries listed in the agent-executed grounding message."""

    answer_grounding_files: int = Field(default=3, ge=0)
    """Workspace files a question names that the agent reads itself before the first request
    (0: none)."""

    doom_identical_calls: int = Field(default=4, ge=2)
    """Same tool with the same arguments this many times in a row is a loop."""

    doom_tool_failures: int = Field(default=6, ge=2)
    """The same tool failing this many times in a row is a loop."""

    doom_idle_steps: int = Field(default=6, ge=2)
    """This many consecutive steps with no action is a loop."""

    doom_cycle_repeats: int = Field(default=3, ge=2)
    """An A-B alternation repeated this many times is a loop."""

    doom_similar_replies: int = Field(default=4, ge=2)
    """This many near-identical replies in a row is a loop."""

    doom_similarity: float = Field(default=0.7, gt=0, le=1)
    """Jaccard similarity at or above which two replies are near-identical."""

    retry_attempts: int = Field(default=3, ge=0)
    """Retries of a transient provider failure before moving down the chain."""

    retry_base_s: float = Field(default=5.0, ge=0)
    """First backoff delay; doubles per retry (with jitter), capped by ``retry_max_s``."""

    retry_max_s: float = Field(default=300.0, ge=0)
    """Longest single backoff delay."""

    provider_error_chars: int = Field(default=140, ge=20)
    """Characters of a provider's first error kept in the failure ledger."""

    provider_message_chars: int = Field(default=1000, ge=100)
    """Characters of the last provider error shown whole in the banner ("Last error: …")."""

    # --- recovery ---------------------------------------------------------------------
    stall_soft_ms: int = Field(default=180_000, ge=1)
    """Silence after which the ``waiting for the model · N s`` pulse shows (once per silence)."""

    stall_hard_ms: int | None = Field(default=None, ge=1)
    """Silence after which the attempt is aborted into resume; default soft + 5 min."""

    # --- ledger and sub-agents --------------------------------------------------------
    home: Annotated[Path, AfterValidator(home_path)] = Field(default_factory=default_home)
    """Where the work ledger lives (``$MERCURY_HOME/ledger.sqlite3``)."""

    subagent_max_resumes: int = Field(default=3, ge=0)
    """Automatic resumes of a paused sub-agent before the parent decides."""

    ledger_keep_finished: int = Field(default=500, ge=1)
    """Finished tasks kept in the ledger; paused ones are never pruned."""

    ledger_keep_days: int = Field(default=30, ge=1)
    """Days a finished task is kept in the ledger."""

    verification_run: bool = False
    """True only in the kernel that re-runs a changed notebook as evidence (the notebook check
    sets ``MERCURY_VERIFICATION_RUN=1`` for it alone): ``%%mercury`` starts nothing there."""

    @field_validator("home", "workdir", mode="before")
    @classmethod
    def _not_blank(cls, value: object, info: ValidationInfo) -> object:
        if isinstance(value, str) and not value.strip():
            raise ValueError(
                f"MERCURY_{str(info.field_name).upper()} is set but empty; unset it to use "
                "the default, or give a folder"
            )
        return value

    @field_validator("workdir")
    @classmethod
    def _existing_workdir(cls, value: Path, info: ValidationInfo) -> Path:
        if info.context and info.context.get("check_workdir") and not value.is_dir():
            raise ValueError(f"the workspace folder {value} does not exist or is not a directory")
        return value

    @field_validator("fallbacks", mode="before")
    @classmethod
    def _split_fallbacks(cls, value: object) -> object:
        if isinstance(value, str):
            return tuple(part.strip() for part in value.split(",") if part.strip())
        return value

    @property
    def effective_stall_hard_ms(self) -> int:
        """The hard stall threshold; with only the soft one set, soft + 5 minutes."""
        if self.stall_hard_ms is not None:
            return self.stall_hard_ms
        return self.stall_soft_ms + 300_000

    @property
    def effective_request_deadline_s(self) -> float:
        """The total deadline of one request; unset, 3 × ``request_timeout_s``."""
        if self.request_deadline_s is not None:
            return self.request_deadline_s
        return self.request_timeout_s * REQUEST_DEADLINE_TIMEOUTS

    @property
    def model_chain(self) -> tuple[str, ...]:
        """The first model followed by the fallbacks, without duplicates."""
        chain: list[str] = []
        for name in (self.model, *self.fallbacks):
            if name not in chain:
                chain.append(name)
        return tuple(chain)

    @classmethod
    def env_overrides(cls, environ: Mapping[str, str] | None = None) -> dict[str, str]:
        """The ``MERCURY_*`` variables that name a field, as raw field values."""
        env = os.environ if environ is None else environ
        found: dict[str, str] = {}
        for name in cls.model_fields:
            raw = env.get(ENV_PREFIX + name.upper())
            if raw is not None and (raw != "" or name in _NO_EMPTY):
                found[name] = raw
        return found

    @classmethod
    def load(
        cls,
        environ: Mapping[str, str] | None = None,
        *,
        base: Mapping[str, Any] | None = None,
        check_workdir: bool = True,
        **overrides: Any,
    ) -> MercuryConfig:
        """Defaults, then ``base`` (traitlets), then the environment, then ``overrides``.
        ``check_workdir`` False: the caller checks the workdir itself (the runs layer's
        door does, once)."""
        values: dict[str, Any] = dict(base or {})
        values.update(cls.env_overrides(environ))
        values.update({k: v for k, v in overrides.items() if v is not None})
        check = check_workdir and "workdir" in values
        return cls.model_validate(values, context={"check_workdir": check})

    def with_changes(self, **changes: Any) -> MercuryConfig:
        """A validated copy with some fields changed."""
        data = self.model_dump()
        data.update(changes)
        return type(self).model_validate(data)
