"""Terminal safety: control sequences are stripped from human output, text is kept."""

from __future__ import annotations

import io

import pytest

from mercury_nb.ui.terminal import TerminalSafeStream, terminal_safe

TABLE = [
    pytest.param("plain\ttext\nnext line", "plain\ttext\nnext line", id="newline-and-tab-kept"),
    pytest.param("\x1b[31mred\x1b[0m", "red", id="csi-colour"),
    pytest.param("before\x1b[2J\x1b[Hafter", "beforeafter", id="clear-screen-and-home"),
    pytest.param("a\x1b[1A\x1b[2Kb", "ab", id="cursor-up-erase-line"),
    pytest.param("\x1b]0;pwned\x07title", "title", id="osc-title-bel"),
    pytest.param("\x1b]2;pwned\x1b\\title", "title", id="osc-title-st"),
    pytest.param("\x1b]52;c;ZXZpbA==\x07x", "x", id="osc-52-clipboard"),
    pytest.param("\x1b]8;;http://evil.example\x1b\\click\x1b]8;;\x1b\\", "click",
                 id="osc-8-hyperlink"),
    pytest.param("\x9b31mred\x9b0m", "red", id="c1-csi"),
    pytest.param("\x9d0;pwned\x9ctitle", "title", id="c1-osc"),
    pytest.param("\x1bPq#0;2;0;0;0\x1b\\img", "img", id="dcs-string"),
    pytest.param("\x1b_hidden\x1b\\shown", "shown", id="apc-string"),
    pytest.param("\x1bcreset", "reset", id="esc-c-full-reset"),
    pytest.param("\x1b(0line", "line", id="charset-switch"),
    pytest.param("secret\rshown", "secretshown", id="carriage-return"),
    pytest.param("abc\x08\x08\x08xyz", "abcxyz", id="backspaces"),
    pytest.param("bell\x07 nul\x00 del\x7f", "bell nul del", id="other-controls"),
    pytest.param("\x1b]0;unterminated", "", id="unterminated-osc"),
    pytest.param("naïve — ✓ 日本", "naïve — ✓ 日本", id="unicode-kept"),
]  # fmt: skip


@pytest.mark.parametrize(("raw", "safe"), TABLE)
def test_terminal_safe(raw: str, safe: str) -> None:
    assert terminal_safe(raw) == safe


def test_the_stream_writes_safe_text() -> None:
    inner = io.StringIO()
    stream = TerminalSafeStream(inner)
    print("\x1b]0;x\x07ok", file=stream)
    assert inner.getvalue() == "ok\n"
