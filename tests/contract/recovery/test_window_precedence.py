"""The context window's precedence, decided in one place: learned > catalog > config > server >
default, each I/O source asked only when nothing before it decided."""

from __future__ import annotations

import pytest

from mercury_nb.contract.config import MercuryConfig
from mercury_nb.contract.recovery.window_precedence import (
    AskedSource,
    AskSource,
    NoWindow,
    UseWindow,
    WindowFacts,
    WindowSource,
    choose_window,
)

PLAIN = MercuryConfig()
SET = MercuryConfig(context_window=50_000, default_context_window=4096)


def settle(
    facts: WindowFacts, config: MercuryConfig, says: dict[AskedSource, int | None]
) -> tuple[tuple[int, WindowSource] | None, list[AskedSource]]:
    """Decide as the transport does, answering each ask from ``says``; the window and source
    chosen (None: no window) and the sources asked, in order."""
    asked: list[AskedSource] = []
    for _ in range(5):
        match choose_window(facts, config):
            case UseWindow(tokens=tokens, source=source):
                return (tokens, source), asked
            case NoWindow():
                return None, asked
            case AskSource(source=source):
                asked.append(source)
                facts = facts.answered(source, says[source])
    raise AssertionError("the decision never settled")


# learned, has_catalog, has_server, what catalog and server say, config -> window, asked
ROWS = [
    pytest.param(9_000, True, True, 128_000, 32_768, SET, (9_000, "learned"), [],
                 id="learned-beats-everything-and-asks-nothing"),
    pytest.param(None, True, True, 128_000, 32_768, SET, (128_000, "catalog"), ["catalog"],
                 id="catalog-beats-config-and-server"),
    pytest.param(None, True, True, None, 32_768, SET, (50_000, "config"), ["catalog"],
                 id="unknown-to-the-catalog-config-wins"),
    pytest.param(None, False, True, None, 32_768, SET, (50_000, "config"), [],
                 id="config-beats-the-server-unasked"),
    pytest.param(None, True, True, None, 32_768, PLAIN, (32_768, "server"),
                 ["catalog", "server"], id="server-when-catalog-and-config-say-nothing"),
    pytest.param(None, False, True, None, None, PLAIN, (8192, "default"), ["server"],
                 id="default-behind-a-silent-server"),
    pytest.param(None, False, True, None, None, SET, (50_000, "config"), [],
                 id="config-even-behind-a-server"),
    pytest.param(None, False, False, None, None, PLAIN, None, [],
                 id="no-server-no-default-no-budget"),
    pytest.param(None, True, False, None, None, PLAIN, None, ["catalog"],
                 id="catalog-silent-no-server-no-budget"),
    pytest.param(None, True, False, 200_000, None, PLAIN, (200_000, "catalog"), ["catalog"],
                 id="catalog-without-a-server"),
    pytest.param(None, False, False, None, None, SET, (50_000, "config"), [],
                 id="config-for-a-plain-model"),
]  # fmt: skip


@pytest.mark.parametrize(
    ("learned", "has_catalog", "has_server", "catalog", "server", "config", "window", "asked"),
    ROWS,
)
def test_precedence(
    learned: int | None, has_catalog: bool, has_server: bool, catalog: int | None,
    server: int | None, config: MercuryConfig, window: tuple[int, WindowSource] | None,
    asked: list[AskedSource],
) -> None:
    facts = WindowFacts(learned=learned, has_catalog=has_catalog, has_server=has_server)
    assert settle(facts, config, {"catalog": catalog, "server": server}) == (window, asked)


def test_a_known_answer_is_not_asked_again() -> None:
    facts = WindowFacts(has_catalog=True, has_server=True).answered("catalog", None)
    assert choose_window(facts, PLAIN) == AskSource("server")
    assert choose_window(facts.answered("server", 16_384), PLAIN) == UseWindow(16_384, "server")
