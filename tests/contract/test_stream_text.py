"""The live text's safety: redacted as a whole, handed out only where no secret can straddle."""

from __future__ import annotations

import pytest

from mercury_nb.contract.stream_text import StreamText, add_text, flush_text, safe_end

SECRET = "s3cr3t-value-of-the-env"


def stream(pieces: list[str], secrets: tuple[str, ...] = (), max_chars: int = 10_000
           ) -> tuple[list[str], str]:
    """What is handed out piece by piece, and the rest at the end."""
    state = StreamText()
    out: list[str] = []
    for piece in pieces:
        state, shown = add_text(state, piece, secrets, max_chars)
        out.append(shown)
    state, rest = flush_text(state, secrets)
    assert state == StreamText()
    return out, rest


@pytest.mark.parametrize(
    ("pieces", "secrets", "joined"),
    [
        pytest.param(["Hello ", "wor", "ld and more"], (), "Hello world and more", id="plain"),
        pytest.param(["key sk-ab", "cdefghijkl12 ok"], (), "key sk-*** ok", id="key-cut-in-two"),
        pytest.param(["Authorization: Bearer ", "abcdefghijk", "lmn done"], (),
                     "Authorization: Bearer *** done", id="bearer-value-later"),
        pytest.param(["MY_API_KEY =", " verysecret", "value end"], (), "MY_API_KEY = *** end",
                     id="assignment-value-later"),
        pytest.param(["the env holds s3cr3t-", "value-of-", "the-env here"], (SECRET,),
                     "the env holds *** here", id="env-secret-in-three"),
        pytest.param(["lone \ud800", "surrogate "], (), "lone \ufffdsurrogate ",
                     id="utf8-made-valid"),
    ],
)
def test_the_joined_live_text_is_redacted_whatever_the_cuts(
        pieces: list[str], secrets: tuple[str, ...], joined: str) -> None:
    out, rest = stream(pieces, secrets)
    assert "".join(out) + rest == joined
    for shown in out:  # no piece handed out carries a part of a secret
        assert "abcdefghijk" not in shown and "verysecret" not in shown
        assert "s3cr3t" not in shown and "cdefghijkl" not in shown


def test_text_is_handed_out_word_by_word_while_it_streams() -> None:
    out, rest = stream(["Stream", "ing wor", "ds arr", "ive"])
    assert out == ["", "Streaming ", "words ", ""]
    assert rest == "arrive"


def test_a_step_records_at_most_max_chars() -> None:
    out, rest = stream(["word " * 100], max_chars=300)
    assert len("".join(out) + rest) == 300


@pytest.mark.parametrize(
    ("shown", "end"),
    [
        pytest.param("no space", 3, id="last-space"),
        pytest.param("nospace", 0, id="none"),
        pytest.param("send Bearer ", 5, id="opens-a-value"),
        pytest.param("x api_key: ", 2, id="opens-with-colon"),
        pytest.param("done.\n", 6, id="newline"),
    ],
)
def test_safe_end(shown: str, end: int) -> None:
    assert safe_end(shown) == end
