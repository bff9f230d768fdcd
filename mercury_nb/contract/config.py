"""The one documented configuration model: every threshold, with MERCURY_* env overrides."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, SecretStr, field_validator

ENV_PREFIX = "MERCURY_"


class MercuryConfig(BaseModel):
    """Every knob and threshold of mercury-nb in one place.

    Each field can be overridden by an environment variable named ``MERCURY_`` plus the
    field name in upper case (``max_steps`` -> ``MERCURY_MAX_STEPS``), by the traitlets
    config of the IPython extension, and by magic / CLI flags. Precedence, lowest first:
    defaults, traitlets, environment, flags.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    model: str = "gpt-4o-mini"
    """The first model of the chain, in litellm's naming (``provider/model``).
    ``scripted/<name>`` selects a scripted model registered with ``mercury_nb.testing``."""

    fallbacks: tuple[str, ...] = ()
    """Further models tried in order when the first one fails (``MERCURY_FALLBACKS``,
    a comma-separated list)."""

    api_base: str | None = None
    """Base URL of an OpenAI-compatible endpoint, passed to litellm."""

    api_key: SecretStr | None = None
    """API key passed to litellm. Never printed, logged or stored."""

    workdir: Path = Field(default_factory=Path.cwd)
    """Workspace root. Every tool path is confined to it. Default: the kernel's cwd."""

    mode: Literal["execute", "chat"] = "execute"
    """``execute`` builds things and is held to the completion contract;
    ``chat`` answers questions and never triggers forced rounds."""

    max_steps: int = Field(default=75, ge=1)
    """Model steps (one streamed reply each) per step budget."""

    max_output_tokens: int = Field(default=32768, ge=256)
    """``max_tokens`` asked of the provider; deliberately above native limits."""

    request_timeout_s: float = Field(default=600.0, gt=0)
    """Timeout of one model request, passed to litellm."""

    command_timeout_s: float = Field(default=120.0, gt=0)
    """Default timeout of ``run_command`` when the model does not give one."""

    max_command_timeout_s: float = Field(default=1800.0, gt=0)
    """Upper bound on any ``timeout_s`` the model asks for."""

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

    @field_validator("fallbacks", mode="before")
    @classmethod
    def _split_fallbacks(cls, value: object) -> object:
        if isinstance(value, str):
            return tuple(part.strip() for part in value.split(",") if part.strip())
        return value

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
            if raw is not None and raw != "":
                found[name] = raw
        return found

    @classmethod
    def load(
        cls,
        environ: Mapping[str, str] | None = None,
        *,
        base: Mapping[str, Any] | None = None,
        **overrides: Any,
    ) -> MercuryConfig:
        """Defaults, then ``base`` (traitlets), then the environment, then ``overrides``."""
        values: dict[str, Any] = dict(base or {})
        values.update(cls.env_overrides(environ))
        values.update({k: v for k, v in overrides.items() if v is not None})
        return cls.model_validate(values)

    def with_changes(self, **changes: Any) -> MercuryConfig:
        """A validated copy with some fields changed."""
        data = self.model_dump()
        data.update(changes)
        return type(self).model_validate(data)
