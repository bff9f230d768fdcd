"""The public result of a task: TaskOutcome and its parts, as JSON-ready pydantic models."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, PrivateAttr

from mercury_nb.contract.notebook_changes import NotebookDiff
from mercury_nb.contract.redaction import RedactedTexts
from mercury_nb.contract.task_status import EndingStatus


class FileChange(BaseModel):
    """One file changed during the task, measured on disk, never taken from the model."""

    model_config = ConfigDict(frozen=True)

    path: str
    added: int
    removed: int
    kind: Literal["created", "modified", "deleted"] = "modified"
    preview: str = ""
    diff: str = ""
    """The file's unified diff (``--- a/… +++ b/…``), capped; empty when not diffed."""
    measured: bool = True
    """False when the file was binary or too large to read: ``added``/``removed`` are then
    not line counts and ``diff`` is empty (say "not diffed", never "+0 −0")."""
    size: int | None = None
    """Bytes on disk after the change (before it, for a deleted file), when known."""
    binary: bool = False
    notebook: NotebookDiff | None = None
    """For a notebook both sides of which parsed: its change cell by cell (from nbdime)."""


EvidenceKind = Literal["command", "notebook", "read-back"]


class CommandEvidence(BaseModel):
    """One piece of evidence: a command the agent ran (``kind`` "command"), a notebook
    executed top to bottom ("notebook"), or a changed file read back from disk
    ("read-back": ``path`` is the file, ``command`` reads ``read back <path>``, and
    ``exit_code`` is 0 when it read back, 1 when it did not). Rows recorded before
    ``kind`` existed load as commands."""

    model_config = ConfigDict(frozen=True)

    command: str
    exit_code: int | None
    step: int
    timed_out: bool = False
    after_last_change: bool = True
    kind: EvidenceKind = "command"
    path: str | None = None


class Usage(BaseModel):
    """Tokens one model used during the task, as its provider reported them in the stream
    (``stream_options.include_usage``); a provider that reports nothing adds nothing."""

    model_config = ConfigDict(frozen=True)

    prompt_tokens: int = 0
    completion_tokens: int = 0
    total_tokens: int = 0


class TaskOutcome(BaseModel):
    """How a task ended. ``answer`` is only ever text from a complete stream."""

    model_config = ConfigDict(frozen=True)

    task_id: str
    task: str
    status: EndingStatus
    resumable: bool = False
    """Whether a "continue" can succeed (``endings.resumable``): front ends offer one only then."""
    cause: dict[str, Any] = {}
    """When not resumable: the settings (``continuing.Setting``) whose change lets a continue
    succeed, with the values the task ended under (``{"models": ["smollm2"], "api_base":
    …}`` for a model without tool support); empty otherwise."""
    verdict: str | None
    answer: str | None
    banner: str
    blocker: str | None = None
    changes: list[FileChange] = []
    evidence: list[CommandEvidence] = []
    steps: int = 0
    models: list[str] = []
    error: str | None = None
    providers: dict[str, str] = {}
    """The per-provider ledger: each provider that failed during the task and its first
    error (redacted, at most ``provider_error_chars`` chars), in chain order."""
    unread: list[str] = []
    """Workspace files the answer talks about that the task never read (the banner says
    "answered without reading …"); empty for every other ending."""
    usage: dict[str, Usage] = {}
    """Token usage per model of the chain (keyed by its configured name), summed over every
    request of the task (its earlier runs before a continue, its sub-agents' too); models
    whose provider reported no usage are absent."""
    cost_usd: float | None = None
    """The estimated USD of those tokens (litellm's price table); None when no price is known
    for any of them (a local model), or none were reported. Models in ``unpriced`` are not in it."""
    unpriced: list[str] = []
    """Models whose tokens have no known price: counted as tokens only."""
    _redacted: RedactedTexts | None = PrivateAttr(default=None)
    """Its banner, blocker and answer as redacted when it was built, with the secrets they
    were redacted against (digests): the ledger redacts them again only for secrets not
    among those. Not dumped; a copy with a changed text is not among them."""

    def redacted_with(self, secrets: tuple[str, ...]) -> TaskOutcome:
        """This outcome, its banner, blocker and answer marked as redacted with ``secrets``."""
        self._redacted = RedactedTexts.of((self.banner, self.blocker, self.answer), secrets)
        return self

    def secrets_left(self, text: str, secrets: tuple[str, ...]) -> tuple[str, ...] | None:
        """What ``text`` (one of its texts) must still be redacted against: see
        :meth:`~mercury_nb.contract.redaction.RedactedTexts.secrets_left`."""
        return None if self._redacted is None else self._redacted.secrets_left(text, secrets)
