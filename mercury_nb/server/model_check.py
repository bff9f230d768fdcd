"""The "Connect a model" form's check: one cheap request to the model, its error verbatim."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass

from mercury_nb.contract.config import MercuryConfig
from mercury_nb.transport.factory import MissingApiKey, resolve_model
from mercury_nb.transport.protocol import ModelRequest, ProviderError, TextChunk

CHECK_PROMPT = "Reply with the word OK."
CHECK_MAX_TOKENS = 16
"""The check asks for this few tokens: a reply costs next to nothing."""


@dataclass(frozen=True)
class CheckResult:
    """``ok``: the model answered (``reply``: its first words); else ``error`` is the
    provider's own message, as it sent it, and ``status`` its HTTP status when known."""

    ok: bool
    reply: str = ""
    error: str | None = None
    status: int | None = None


async def check_model(config: MercuryConfig) -> CheckResult:
    """Send ``config.model`` one short request (no retry, no fallback) and read the start of
    its reply; the request is abandoned after ``config.request_timeout_s``."""
    try:
        model = resolve_model(config.model, config)
    except (MissingApiKey, LookupError, ValueError, ImportError) as error:
        return CheckResult(ok=False, error=str(error))
    request = ModelRequest(messages=({"role": "user", "content": CHECK_PROMPT},),
                           max_tokens=CHECK_MAX_TOKENS)

    async def first_words() -> str:
        text = ""
        stream = model.stream(request)
        try:
            async for chunk in stream:
                if isinstance(chunk, TextChunk):
                    text += chunk.text
        finally:
            closer = getattr(stream, "aclose", None)
            if closer is not None:
                await closer()
        return text

    try:
        reply = await asyncio.wait_for(first_words(), timeout=config.request_timeout_s)
    except ProviderError as error:
        return CheckResult(ok=False, error=error.message, status=error.status)
    except TimeoutError:
        return CheckResult(ok=False, error=f"no reply within {config.request_timeout_s:g} s")
    except Exception as error:  # a dropped connection, a malformed reply: said as it came
        return CheckResult(ok=False, error=str(error) or type(error).__name__)
    return CheckResult(ok=True, reply=reply.strip()[:200])
