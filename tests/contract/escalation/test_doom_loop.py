"""Table tests of the doom-loop detector: every loop shape and its near misses."""

from __future__ import annotations

import pytest

from mercury_nb.contract.config import MercuryConfig
from mercury_nb.contract.escalation.doom_loop import (
    DoomLoop,
    DoomState,
    NoLoop,
    StepObservation,
    ToolCallObservation,
    canonical_arguments,
    jaccard,
    loop_directive,
    observe_step,
    reply_words,
    reset_for_new_turn,
)

CONFIG = MercuryConfig()


def call(name: str, path: str = "a.py", ok: bool = True) -> ToolCallObservation:
    return ToolCallObservation(
        name=name, arguments=canonical_arguments(f'{{"path":"{path}"}}'), ok=ok
    )


def step(*calls: ToolCallObservation, text: str = "") -> StepObservation:
    return StepObservation(tool_calls=calls, text=text)


def feed(
    steps: list[StepObservation], state: DoomState | None = None
) -> tuple[DoomState, list[tuple[int, DoomLoop]]]:
    """Feed steps in order; return the final state and every (step number, loop) fired."""
    current = state or DoomState()
    fired: list[tuple[int, DoomLoop]] = []
    for number, observed in enumerate(steps, start=1):
        current, verdict = observe_step(current, observed, CONFIG)
        if isinstance(verdict, DoomLoop):
            fired.append((number, verdict))
        else:
            assert verdict == NoLoop()
    return current, fired


def busy(n: int, text: str) -> StepObservation:
    """A step that acts without progress: a failing call, never the same one twice, of two
    tools in turn (so no identical-call, failure-run or idle rule can fire)."""
    return step(call(("write_file", "run_command")[n % 2], f"p{n}", ok=False), text=text)


A = call("read_file", "a.py")
B = call("list_dir", ".")
C = call("read_file", "c.py")
SIMILAR = [
    "I will now create the main application file with the routes.",
    "I will now create the main application file with all the routes.",
    "Now I will create the main application file with the routes.",
    "I will now create the main application file, with the routes.",
]


@pytest.mark.parametrize(
    ("steps", "kind", "at_step"),
    [
        # identical calls
        pytest.param([step(A)] * 4, "identical-calls", 4, id="identical-4-fires"),
        pytest.param([step(A)] * 3 + [step(C)], None, None, id="identical-3-then-other"),
        pytest.param(
            [step(call("read_file", f"f{i}.py")) for i in range(8)],
            None,
            None,
            id="same-tool-different-args",
        ),
        pytest.param([step(A, A, A, A)], "identical-calls", 1, id="identical-in-one-step"),
        pytest.param(
            [step(call("edit_file", ok=False))] * 6,
            "identical-calls",
            4,
            id="identical-failing-fires-as-identical-first",
        ),
        # tool failures
        pytest.param(
            [step(call("run_command", f"cmd{i}", ok=False)) for i in range(6)],
            "tool-failures",
            6,
            id="same-tool-fails-6",
        ),
        pytest.param(
            [step(call("run_command", f"cmd{i}", ok=False)) for i in range(5)],
            None,
            None,
            id="fails-5",
        ),
        pytest.param(
            [step(call("run_command", f"c{i}", ok=False)) for i in range(5)]
            + [step(call("run_command", "ok"))]
            + [step(call("run_command", f"d{i}", ok=False)) for i in range(5)],
            None,
            None,
            id="success-resets-failures",
        ),
        pytest.param(
            [
                step(call("run_command", f"c{i}", ok=False), call("read_file", f"r{i}"))
                for i in range(6)
            ],
            None,
            None,
            id="interleaved-other-tool-resets-failures",
        ),
        pytest.param(
            [step(call("write_file", f"w{i}", ok=False)) for i in range(3)]
            + [step(call("edit_file", f"e{i}", ok=False)) for i in range(3)],
            None,
            None,
            id="different-tools-failing",
        ),
        # idle steps
        pytest.param([step()] * 6, "idle-steps", 6, id="idle-6-fires"),
        pytest.param([step()] * 5 + [step(A)] + [step()] * 5, None, None, id="idle-5-action-5"),
        # A-B cycle
        pytest.param([step(A), step(B)] * 3, "cycle", 6, id="abab-ab-fires"),
        pytest.param([step(A, B)] * 3, "cycle", 3, id="ab-pairs-in-steps-fire"),
        pytest.param([step(A), step(B)] * 2 + [step(A)], None, None, id="ababa-too-short"),
        pytest.param(
            [step(A), step(B), step(A), step(B), step(A), step(C)],
            None,
            None,
            id="ababac-broken",
        ),
        pytest.param([step(A), step(B), step(C)] * 3, None, None, id="abc-cycle-not-ab"),
        # similar replies
        pytest.param([step(text=t) for t in SIMILAR], "similar-replies", 4, id="similar-4-fires"),
        pytest.param(
            [busy(i, t) for i, t in enumerate(SIMILAR[:3])]
            + [busy(3, "Here is a completely different plan for the database layer.")]
            + [busy(4 + i, t) for i, t in enumerate(SIMILAR[:3])],
            None,
            None,
            id="similar-3-broken-3",
        ),
        pytest.param(
            [
                step(text=SIMILAR[0]),
                step(text=""),
                busy(1, ""),
                busy(2, SIMILAR[1]),
                busy(3, "  "),
                busy(4, SIMILAR[2]),
                busy(5, SIMILAR[3]),
            ],
            "similar-replies",
            7,
            id="empty-texts-ignored",
        ),
        pytest.param(
            [
                step(call("read_file", f"src/f{i}.py"), text=f"Now let me read src/f{i}.py")
                for i in range(6)
            ],
            None,
            None,
            id="similar-texts-with-new-work",
        ),
        pytest.param(
            [
                step(
                    call("read_file", f"f{i % 2}.py"),
                    call("list_dir", f"d{i}"),
                    text="Let me check that file again now.",
                )
                for i in range(4)
            ],
            None,
            None,
            id="similar-texts-each-with-a-new-call",
        ),
        pytest.param(
            [step(call("read_file", "x.py", ok=False), text=t) for t in SIMILAR[:3]]
            + [step(text=SIMILAR[3])],
            "similar-replies",
            4,
            id="similar-texts-with-failed-calls",
        ),
        pytest.param(
            [
                step(text="build the parser"),
                step(text="build the lexer"),
                step(text="build the parser"),
                step(text="build the lexer"),
            ],
            None,
            None,
            id="below-threshold",
        ),
    ],
)
def test_loop_shapes(steps: list[StepObservation], kind: str | None, at_step: int | None) -> None:
    _, fired = feed(steps)
    if kind is None:
        assert fired == []
    else:
        assert [(n, loop.kind) for n, loop in fired] == [(at_step, kind)]


@pytest.mark.parametrize(
    ("steps", "must_mention"),
    [
        pytest.param([step(A)] * 4, ["read_file", "a.py", "4 times"], id="identical"),
        pytest.param(
            [step(call("run_command", f"c{i}", ok=False)) for i in range(6)],
            ["run_command", "6 times"],
            id="failures",
        ),
        pytest.param([step()] * 6, ["6 steps"], id="idle"),
        pytest.param([step(A), step(B)] * 3, ["read_file", "list_dir", "3 times"], id="cycle"),
        pytest.param(
            [step(text=t) for t in SIMILAR], ["4 near-identical", "application"], id="similar"
        ),
    ],
)
def test_description_names_what_looped(
    steps: list[StepObservation], must_mention: list[str]
) -> None:
    _, fired = feed(steps)
    ((_, loop),) = fired
    for fragment in must_mention:
        assert fragment in loop.description
    assert loop.description in loop_directive(loop)


def test_firing_returns_a_fresh_state() -> None:
    state, fired = feed([step(A)] * 4)
    assert len(fired) == 1
    assert state == DoomState()
    _, again = feed([step(A)] * 3, state)
    assert again == []


def test_guard_rounds_are_not_cut_short_by_similar_or_idle() -> None:
    """Ten narrating turns of one text-only step each, reset between turns: no loop."""
    state = DoomState()
    for _ in range(10):
        state = reset_for_new_turn(state)
        state, fired = feed([step(text=SIMILAR[0])], state)
        assert fired == []


@pytest.mark.parametrize(
    ("before", "after", "fires"),
    [
        pytest.param(
            [step(text=t) for t in SIMILAR[:3]], [step(text=SIMILAR[3])], False, id="similar-reset"
        ),
        pytest.param([step()] * 5, [step()], False, id="idle-reset"),
        pytest.param([step(A)] * 2, [step(A)] * 2, True, id="identical-calls-survive"),
        pytest.param([step(A), step(B)], [step(A), step(B)] * 2, True, id="cycle-survives"),
    ],
)
def test_reset_for_new_turn(
    before: list[StepObservation], after: list[StepObservation], fires: bool
) -> None:
    state, fired = feed(before)
    assert fired == []
    _, fired = feed(after, reset_for_new_turn(state))
    assert bool(fired) is fires


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        pytest.param('{"b": 1, "a": 2}', '{"a":2,"b":1}', id="sorted-compact"),
        pytest.param('{ "a" : "é" }', '{"a":"é"}', id="unicode-kept"),
        pytest.param('  {"a": 1  ', '{"a": 1', id="malformed-stripped"),
        pytest.param("", "", id="empty"),
    ],
)
def test_canonical_arguments(raw: str, expected: str) -> None:
    assert canonical_arguments(raw) == expected


def test_argument_order_does_not_hide_a_loop() -> None:
    orders = ['{"path": "a", "n": 1}', '{"n": 1, "path": "a"}'] * 2
    steps = [
        step(ToolCallObservation("read_file", canonical_arguments(raw), True)) for raw in orders
    ]
    _, fired = feed(steps)
    assert [loop.kind for _, loop in fired] == ["identical-calls"]


@pytest.mark.parametrize(
    ("left", "right", "expected"),
    [
        pytest.param("a b c", "a b c", 1.0, id="same"),
        pytest.param("a b c d", "a b c e", 0.6, id="three-of-five"),
        pytest.param("A, b! c", "a b c", 1.0, id="case-and-punctuation"),
        pytest.param("x", "y", 0.0, id="disjoint"),
    ],
)
def test_jaccard(left: str, right: str, expected: float) -> None:
    assert jaccard(reply_words(left), reply_words(right)) == pytest.approx(expected)


def test_thresholds_come_from_config() -> None:
    config = CONFIG.with_changes(doom_identical_calls=2, doom_idle_steps=2)
    state, verdict = observe_step(DoomState(), step(A), config)
    assert verdict == NoLoop()
    _, verdict = observe_step(state, step(A), config)
    assert isinstance(verdict, DoomLoop) and verdict.kind == "identical-calls"
    state, verdict = observe_step(DoomState(), step(), config)
    _, verdict = observe_step(state, step(), config)
    assert isinstance(verdict, DoomLoop) and verdict.kind == "idle-steps"
