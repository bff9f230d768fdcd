"""Which context window a model is budgeted for: the precedence of its sources, decided once.

First found of: the window a provider's overflow error named (learned), the model catalog's
(litellm's model info or its bundled table), ``config.context_window``, what the server
behind the model's ``api_base`` reports, and for a model behind such a server
``config.default_context_window``. The transport gathers the facts (a catalog or a server is
asked only when the decision asks for it); this module only says which one wins.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Literal

from mercury_nb.contract.config import MercuryConfig

WindowSource = Literal["learned", "catalog", "config", "server", "default"]
"""Where a budgeted window came from."""

AskedSource = Literal["catalog", "server"]
"""The sources that take I/O to learn (a table read off the event loop, an HTTP probe)."""


@dataclass(frozen=True)
class WindowFacts:
    """What is known of one model's window so far. ``has_catalog``: a catalog can be asked
    about it; ``has_server``: it talks to a server behind an ``api_base``. ``catalog`` and
    ``server``: their answers once asked (None: asked, did not know), absent while unasked."""

    learned: int | None = None
    has_catalog: bool = False
    has_server: bool = False
    answers: tuple[tuple[AskedSource, int | None], ...] = ()

    def answered(self, source: AskedSource, tokens: int | None) -> WindowFacts:
        """These facts with ``source``'s answer added."""
        return replace(self, answers=(*self.answers, (source, tokens)))


@dataclass(frozen=True)
class UseWindow:
    """Budget for ``tokens``, found in ``source``."""

    tokens: int
    source: WindowSource


@dataclass(frozen=True)
class AskSource:
    """Ask ``source`` (no earlier source decided), then decide again with its answer."""

    source: AskedSource


@dataclass(frozen=True)
class NoWindow:
    """Nothing says the window: no context budget."""


WindowDecision = UseWindow | AskSource | NoWindow


def choose_window(facts: WindowFacts, config: MercuryConfig) -> WindowDecision:
    """The next step toward the window to budget for: the first source that knows it wins,
    in the order learned > catalog > config > server > default; an unasked catalog or server
    in that order is asked first. The default applies only to a model behind a server."""
    if facts.learned is not None:
        return UseWindow(facts.learned, "learned")
    answers = dict(facts.answers)
    if facts.has_catalog:
        if "catalog" not in answers:
            return AskSource("catalog")
        catalog = answers["catalog"]
        if catalog is not None:
            return UseWindow(catalog, "catalog")
    if config.context_window is not None:
        return UseWindow(config.context_window, "config")
    if not facts.has_server:
        return NoWindow()
    if "server" not in answers:
        return AskSource("server")
    server = answers["server"]
    if server is not None:
        return UseWindow(server, "server")
    return UseWindow(config.default_context_window, "default")
