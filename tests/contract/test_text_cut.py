"""The one head-and-tail cutter: what is kept, where the marker goes, how the budget counts."""

from __future__ import annotations

import pytest

from mercury_nb.contract.text_cut import fit_head_and_tail, keep_head_and_tail

TEXT = "0123456789" * 3  # 30 characters


def cut_note(cut: int) -> str:
    return f"[{cut} cut]"


@pytest.mark.parametrize(
    ("text", "keep", "marker", "expected"),
    [
        pytest.param(TEXT, 30, cut_note, TEXT, id="fits-exactly-whole"),
        pytest.param(TEXT, 99, cut_note, TEXT, id="short-whole"),
        pytest.param(TEXT, 10, cut_note, "01234\n[20 cut]\n56789", id="even-keep"),
        pytest.param(TEXT, 5, cut_note, "01\n[25 cut]\n789", id="odd-keep-tail-takes-the-extra"),
        pytest.param(TEXT, 1, cut_note, "\n[29 cut]\n9", id="one-kept-is-the-last"),
        pytest.param(TEXT, 0, cut_note, "\n[30 cut]\n", id="none-kept-marker-only"),
        pytest.param(TEXT, -4, cut_note, "\n[30 cut]\n", id="negative-keeps-nothing"),
        pytest.param(TEXT, 4, "[fixed]", "01\n[fixed]\n89", id="fixed-marker"),
        pytest.param("", 0, cut_note, "", id="empty"),
    ],
)  # fmt: skip
def test_keep_head_and_tail(text: str, keep: int, marker: str | None, expected: str) -> None:
    assert keep_head_and_tail(text, keep, marker or cut_note) == expected


@pytest.mark.parametrize(
    ("budget", "expected"),
    [
        pytest.param(30, TEXT, id="fits-whole"),
        # room for "[10 cut]" (8 chars, the cut of 30 - 20) leaves 12 kept; 18 are cut
        pytest.param(20, "012345\n[18 cut]\n456789", id="marker-counted-in-the-budget"),
        pytest.param(9, "\n[29 cut]\n9", id="what-the-marker-leaves-is-kept"),
        pytest.param(5, "\n[30 cut]\n", id="budget-smaller-than-the-marker"),
    ],
)  # fmt: skip
def test_fit_head_and_tail(budget: int, expected: str) -> None:
    assert fit_head_and_tail(TEXT, budget, cut_note) == expected


@pytest.mark.parametrize("size", [1_001, 5_000, 123_457])
@pytest.mark.parametrize("keep", [0, 7, 30, 1_000])
def test_a_cut_text_is_what_was_kept_and_the_marker(size: int, keep: int) -> None:
    text = "a" * (size // 2) + "z" * (size - size // 2)
    kept = keep_head_and_tail(text, keep, cut_note)
    assert len(kept) == keep + len(cut_note(size - keep)) + 2
    assert (kept.count("a"), kept.count("z")) == (keep // 2, keep - keep // 2)
