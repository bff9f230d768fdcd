"""The resume turn: the task, what is done (files, last check) and what remains, not "continue"."""

from __future__ import annotations

import pytest

from mercury_nb.contract.config import MercuryConfig
from mercury_nb.contract.recovery.resumption import (
    QUESTION_HEADER,
    RESUME_HEADER,
    LastCheck,
    ResumeFacts,
    resume_message,
)
from mercury_nb.contract.vocabulary import TurnVerdict

CONFIG = MercuryConfig(resume_listed_files=3)
NUDGE = (
    "[SYSTEM: STEP BUDGET] You reached the tool-step budget for this task. "
    "The task is NOT done — do not summarize or wrap up."
)
TASK = "Create hello.py that prints hello world, and run it."
QUESTION_TASK = "What does README.md say about installing?"
CHECK = ("Then run a check (the project's tests, or the program the task asks for) that "
         "passes after your last change.")
ACT = "Carry on with tools now; the user's word \"continue\" means this task."
PYTEST_FAILED = LastCheck("python -m pytest -q", 1)
RAN_HELLO = LastCheck("python hello.py", 0)


@pytest.mark.parametrize(
    ("facts", "lines"),
    [
        pytest.param(
            ResumeFacts(TASK),
            [RESUME_HEADER, f'The task remains: "{TASK}"',
             "Done so far: no file has changed since the task started.",
             "Last check: none — no build or test has run yet.",
             "What remains: finish the task.",
             "Then run a check (the project's tests, or the program the task asks for) that "
             "passes after your last change.",
             "Carry on with tools now; the user's word \"continue\" means this task."],
            id="nothing-done-yet",
        ),
        pytest.param(
            ResumeFacts(TASK, changed=("hello.py (created)",), last_check=PYTEST_FAILED,
                        blocker="the last check did not pass: python -m pytest -q ✗ (exit 1)"),
            [RESUME_HEADER, f'The task remains: "{TASK}"',
             "Done so far — files changed since the task started: hello.py (created).",
             "Last check: `python -m pytest -q` failed (exit code 1).",
             "Why it paused: the last check did not pass: python -m pytest -q ✗ (exit 1).",
             "What remains: finish the task.",
             "Then run a check (the project's tests, or the program the task asks for) that "
             "passes after your last change.",
             "Carry on with tools now; the user's word \"continue\" means this task."],
            id="the-last-check-failed",
        ),
        pytest.param(
            ResumeFacts(TASK, changed=("hello.py (created)", "notes.md (modified)"),
                        last_check=RAN_HELLO, last_verdict=TurnVerdict.STEPS_EXHAUSTED),
            [NUDGE, f'The task remains: "{TASK}"',
             "Done so far — files changed since the task started: hello.py (created), "
             "notes.md (modified).",
             "Last check: `python hello.py` passed.",
             "What remains: the work the step budget cut off.",
             "Carry on with tools now; the user's word \"continue\" means this task."],
            id="step-budget-pause-uses-the-spec-nudge",
        ),
        pytest.param(
            ResumeFacts(TASK, changed=("a.py (modified)",),
                        last_check=LastCheck("pytest", 0, after_last_change=False),
                        blocker="hello.py was not created"),
            [RESUME_HEADER, f'The task remains: "{TASK}"',
             "Done so far — files changed since the task started: a.py (modified).",
             "Last check: `pytest` passed, before the last change.",
             "Why it paused: hello.py was not created.",
             "What remains: finish the task.",
             "Then run a check (the project's tests, or the program the task asks for) that "
             "passes after your last change.",
             "Carry on with tools now; the user's word \"continue\" means this task."],
            id="stale-check-and-a-missing-file",
        ),
        pytest.param(
            ResumeFacts(TASK, last_check=LastCheck("sleep 300", None, timed_out=True),
                        user_words="use pytest"),
            [RESUME_HEADER, f'The task remains: "{TASK}"',
             "Done so far: no file has changed since the task started.",
             "Last check: `sleep 300` timed out.",
             "What remains: finish the task.",
             "Then run a check (the project's tests, or the program the task asks for) that "
             "passes after your last change.",
             "Carry on with tools now, following what the user adds in the next message."],
            id="timed-out-and-user-words",
        ),
        pytest.param(
            ResumeFacts(TASK, last_verdict=TurnVerdict.STEPS_EXHAUSTED,
                        blocker="interrupted: the process stopped mid-task"),
            [RESUME_HEADER, f'The task remains: "{TASK}"',
             "Done so far: no file has changed since the task started.",
             "Last check: none — no build or test has run yet.",
             "Why it paused: interrupted: the process stopped mid-task.",
             "What remains: finish the task.",
             "Then run a check (the project's tests, or the program the task asks for) that "
             "passes after your last change.",
             "Carry on with tools now; the user's word \"continue\" means this task."],
            id="a-crash-after-an-auto-continue-is-no-step-budget-pause",
        ),
        pytest.param(
            ResumeFacts(TASK, blocker="pip cannot reach PyPI from this machine"),
            [RESUME_HEADER, f'The task remains: "{TASK}"',
             "Done so far: no file has changed since the task started.",
             "Last check: none — no build or test has run yet.",
             "Why it paused: pip cannot reach PyPI from this machine.",
             "What remains: finish the task.",
             CHECK,
             ACT],
            id="a-blocker-is-said-once-without-a-second-label",
        ),
        pytest.param(
            ResumeFacts(QUESTION_TASK, question=True),
            [QUESTION_HEADER, f'The task remains: "{QUESTION_TASK}"',
             "What remains: answer the question.",
             "Answer it now; read the files it names with tools first if you need them."],
            id="a-question-is-not-told-to-work-or-run-a-check",
        ),
        pytest.param(
            ResumeFacts(QUESTION_TASK, blocker="Should the summary be one line or a list?",
                        user_words="a list", question=True),
            [QUESTION_HEADER, f'The task remains: "{QUESTION_TASK}"',
             "Why it paused: Should the summary be one line or a list?",
             "What remains: answer the question.",
             "Answer it now, following what the user adds in the next message."],
            id="a-question-that-asked-back",
        ),
        pytest.param(
            ResumeFacts(QUESTION_TASK, last_verdict=TurnVerdict.STEPS_EXHAUSTED,
                        last_check=RAN_HELLO, question=True),
            [QUESTION_HEADER, f'The task remains: "{QUESTION_TASK}"',
             "Last check: `python hello.py` passed.",
             "What remains: answer the question.",
             "Answer it now; read the files it names with tools first if you need them."],
            id="a-question-cut-by-the-step-budget-gets-no-work-nudge",
        ),
        pytest.param(
            ResumeFacts("write the notes", changed=("a.txt (created)",), question=True),
            [RESUME_HEADER, 'The task remains: "write the notes"',
             "Done so far — files changed since the task started: a.txt (created).",
             "Last check: none — no build or test has run yet.",
             "What remains: finish the task.",
             CHECK,
             ACT],
            id="read-as-a-question-but-it-changed-files-so-it-is-work",
        ),
        pytest.param(
            ResumeFacts(TASK, blocker="smollm2 does not take tools (its server reports no tool "
                        "support)", settings_changed=True),
            [RESUME_HEADER, f'The task remains: "{TASK}"',
             "Done so far: no file has changed since the task started.",
             "Last check: none — no build or test has run yet.",
             "What remains: the whole task — it stopped because of the settings it ran under "
             "(the model, its server or its window), and those have changed.",
             CHECK,
             ACT],
            id="another-model-is-not-fed-the-old-models-blocker",
        ),
        pytest.param(
            ResumeFacts(TASK, last_check=LastCheck("make test", None)),
            [RESUME_HEADER, f'The task remains: "{TASK}"',
             "Done so far: no file has changed since the task started.",
             "Last check: `make test` did not finish.",
             "What remains: finish the task.",
             "Then run a check (the project's tests, or the program the task asks for) that "
             "passes after your last change.",
             "Carry on with tools now; the user's word \"continue\" means this task."],
            id="no-exit-code",
        ),
    ],
)
def test_the_resume_turn(facts: ResumeFacts, lines: list[str]) -> None:
    assert resume_message(facts, CONFIG).split("\n") == lines


def test_the_files_and_the_task_are_bounded() -> None:
    files = tuple(f"f{n}.py (created)" for n in range(5))
    text = resume_message(ResumeFacts("x" * 500, changed=files), CONFIG)
    assert f'"{"x" * CONFIG.task_restate_chars}"' in text
    assert "x" * (CONFIG.task_restate_chars + 1) not in text
    assert "f0.py (created), f1.py (created), f2.py (created) and 2 more." in text
    assert "f3.py" not in text


def test_a_long_blocker_and_command_are_cut() -> None:
    facts = ResumeFacts(TASK, last_check=LastCheck("echo " + "y" * 400, 2), blocker="z" * 400)
    text = resume_message(facts, CONFIG)
    assert "y" * CONFIG.blocker_chars not in text and "z" * CONFIG.blocker_chars not in text
    assert text.count("…") == 2


def test_it_is_never_the_bare_word() -> None:
    text = resume_message(ResumeFacts("continue"), CONFIG)
    assert text.strip().lower() != "continue"
    assert text.startswith("[SYSTEM: RESUME]")
