"""Plain-text banners: exact texts, one per ending, and no completion on any other path."""

from __future__ import annotations

from typing import get_args

import pytest

from mercury_nb.contract.banners import banner_text
from mercury_nb.contract.change_lines import change_line
from mercury_nb.contract.endings import (
    Aborted,
    BlockedPause,
    Blocker,
    BudgetPause,
    DeclinedPause,
    Ending,
    Failed,
    FilesMissingPause,
    NoChangesCompletion,
    NoToolSupport,
    Paused,
    ProviderAttempt,
    ProviderFailure,
    QuestionPause,
    StepBudgetPause,
    TruncationPause,
    VerificationFailedPause,
    VerifiedCompletion,
    WindowTooSmall,
    WorkNotStartedPause,
    resumable,
    status_of,
)
from mercury_nb.contract.gate.verification import CheckRecord, ReadBack, Verified
from mercury_nb.contract.outcome import FileChange
from mercury_nb.contract.spend import CostBudgetHit, TokenBudgetHit

CHANGES = [
    FileChange(path="src/app.py", added=12, removed=0, kind="created"),
    FileChange(path="README.md", added=3, removed=1),
    FileChange(path="old.py", added=0, removed=40, kind="deleted"),
]
SUMMARY = ["+12 −0 src/app.py (created)", "+3 −1 README.md", "+0 −40 old.py (deleted)"]
PASSED = CheckRecord("npm test", 0, 9)
FAILED = CheckRecord("npm test", 1, 9)
STEP_PAUSE = (
    "I've paused for now — this one needs another pass. "
    'Send "continue" and I\'ll pick up right where I left off.'
)
NOT_STARTED = "I couldn't get started on this one yet — send \"continue\" and I'll try again."
VERIFY_FAILED = "The changes are in, but the last check didn't pass — I'm not calling this done."
NO_TOOLS_FIX = (
    "To fix it: choose a model with tool support; or start llama-server with --jinja and a "
    "tool-capable --chat-template-file; or use a provider that supports tools. Resuming this "
    "task cannot help: run it again once the model takes tools."
)


@pytest.mark.parametrize(
    ("ending", "changes", "lines"),
    [
        pytest.param(
            VerifiedCompletion(Verified(PASSED)),
            CHANGES,
            ["✓ Task complete", *SUMMARY, "✓ Verified: npm test ✓"],
            id="verified",
        ),
        pytest.param(
            VerifiedCompletion(Verified(CheckRecord("run notebook analysis.ipynb", 0, 4,
                                                    kind="notebook", path="analysis.ipynb"))),
            [FileChange(path="analysis.ipynb", added=3, removed=0)],
            ["✓ Task complete", "+3 −0 analysis.ipynb",
             "✓ Verified: analysis.ipynb ran top to bottom in a fresh kernel"],
            id="verified-notebook",
        ),
        pytest.param(
            VerifiedCompletion(ReadBack(("README.md",))),
            CHANGES[1:2],
            [
                "✓ Task complete",
                SUMMARY[1],
                "✓ Verified: change summary and read-back of README.md ✓",
            ],
            id="read-back",
        ),
        pytest.param(
            NoChangesCompletion("git"),
            [],
            ["Response delivered · no file changes (git-verified)"],
            id="no-changes-git",
        ),
        pytest.param(
            NoChangesCompletion("snapshot"),
            [],
            ["Response delivered · no file changes (snapshot-verified)"],
            id="no-changes-snapshot",
        ),
        pytest.param(StepBudgetPause(6), [], [STEP_PAUSE], id="step-budget"),
        pytest.param(
            StepBudgetPause(6),
            CHANGES[:1],
            [STEP_PAUSE, "Changes so far:", SUMMARY[0]],
            id="step-budget-with-changes",
        ),
        pytest.param(
            WorkNotStartedPause(Blocker("write_file", "permission denied: /etc/x")),
            [],
            [NOT_STARTED, "What blocked it: write_file: permission denied: /etc/x"],
            id="work-not-started",
        ),
        pytest.param(
            WorkNotStartedPause(None),
            [],
            [
                NOT_STARTED,
                "What blocked it: no change was attempted — only a description of the work.",
            ],
            id="work-not-started-no-blocker",
        ),
        pytest.param(
            VerificationFailedPause(FAILED, stale=False),
            CHANGES[:1],
            [VERIFY_FAILED, "Last check: npm test ✗ (exit 1)", "Changes so far:", SUMMARY[0]],
            id="verification-failed",
        ),
        pytest.param(
            VerificationFailedPause(CheckRecord(
                "run notebook analysis.ipynb", 1, 4, kind="notebook", path="analysis.ipynb",
                failure="cell 7: ZeroDivisionError: division by zero"), stale=False),
            [],
            [VERIFY_FAILED, "Last check: run notebook analysis.ipynb ✗ (cell 7: "
             "ZeroDivisionError: division by zero)"],
            id="notebook-failed-names-the-cell-and-the-error",
        ),
        pytest.param(
            VerificationFailedPause(CheckRecord("pytest", 0, 3, timed_out=True), stale=False),
            [],
            [VERIFY_FAILED, "Last check: pytest ✗ (timed out)"],
            id="verification-timed-out",
        ),
        pytest.param(
            VerificationFailedPause(CheckRecord("pytest", None, 3), stale=False),
            [],
            [VERIFY_FAILED, "Last check: pytest ✗ (no exit code)"],
            id="verification-no-exit-code",
        ),
        pytest.param(
            VerificationFailedPause(PASSED, stale=True),
            [],
            [VERIFY_FAILED, "Last check: npm test (ran before the latest changes)"],
            id="verification-stale",
        ),
        pytest.param(
            VerificationFailedPause(None, stale=False),
            [],
            [VERIFY_FAILED, "Last check: none — no build or test ran after the changes."],
            id="verification-none",
        ),
        pytest.param(
            VerificationFailedPause(FAILED, stale=False, requested="the tests"),
            [],
            ["The task asks me to run the tests — that run did not pass, so I'm not calling "
             "this done.", "Last check: npm test ✗ (exit 1)"],
            id="requested-run-failed",
        ),
        pytest.param(
            VerificationFailedPause(PASSED, stale=True, requested="the tests"),
            [],
            ["The task asks me to run the tests — it has not run since the latest changes, so "
             "I'm not calling this done.", "Last check: npm test (ran before the latest changes)"],
            id="requested-run-stale",
        ),
        pytest.param(
            VerificationFailedPause(None, stale=False, requested="`sleep 300`"),
            [],
            ["The task asks me to run `sleep 300` — it has not run, so I'm not calling this "
             "done.", "Last run: none — `sleep 300` never ran."],
            id="requested-run-never-ran",
        ),
        pytest.param(
            BudgetPause(CostBudgetHit(0.52, 0.5)),
            CHANGES[:1],
            ["I've paused — budget reached: $0.52 of $0.50 spent.",
             "To go on, continue with a higher budget: --max-cost USD (or MERCURY_MAX_COST_USD).",
             "Changes so far:", SUMMARY[0]],
            id="cost-budget",
        ),
        pytest.param(
            BudgetPause(TokenBudgetHit(12_345, 10_000, ("ollama/llama3",))),
            [],
            ["I've paused — budget reached: 12.3k of 10k tokens used (no price known for "
             "ollama/llama3: tokens only).",
             "To go on, continue with a higher budget: --max-tokens N (or MERCURY_MAX_TOKENS)."],
            id="token-budget-of-a-local-model",
        ),
        pytest.param(
            TruncationPause(6),
            [],
            [
                "I've paused for now — my replies kept hitting the output-token limit. "
                'Send "continue" and I\'ll pick up right where I left off.'
            ],
            id="truncation",
        ),
        pytest.param(
            Paused("the same tool call kept repeating.", Blocker("run_command", "exit 1")),
            [],
            [
                "I've paused for now — the same tool call kept repeating. "
                'Send "continue" and I\'ll pick up right where I left off.',
                "What blocked it: run_command: exit 1",
            ],
            id="paused-generic",
        ),
        pytest.param(
            ProviderFailure(
                "503 Service Unavailable",
                (ProviderAttempt("gpt-4o", "429 rate limited"), ProviderAttempt("claude", "503")),
            ),
            [],
            [
                "All LLM providers failed. Last error: 503 Service Unavailable",
                "Per-provider:",
                "- gpt-4o: 429 rate limited",
                "- claude: 503",
            ],
            id="provider-failure",
        ),
        pytest.param(
            BlockedPause("I'm sorry, I can't run\ncommands in this workspace."),
            CHANGES[:1],
            [
                "I've paused — I couldn't finish this one.",
                "What blocked it: I'm sorry, I can't run commands in this workspace.",
                'Once that is sorted out, send "continue" and I\'ll try again.',
                "Changes so far:",
                SUMMARY[0],
            ],
            id="blocked",
        ),
        pytest.param(
            DeclinedPause("The greeting\nalready exists in notes.md."),
            [],
            [
                "I've paused — this task asks for a change, but the model declined to make any.",
                "What it said: no change is needed — The greeting already exists in notes.md.",
                'If the change is still wanted, send "continue, <what to change>" and I\'ll go '
                "on from there.",
            ],
            id="declined",
        ),
        pytest.param(
            QuestionPause("Should todos live in JSON\nor SQLite?"),
            [],
            [
                "I need your answer before I go on: Should todos live in JSON or SQLite?",
                'Answer with "continue, <your answer>" and I\'ll go on from there (a bare '
                '"continue" goes on without one).',
            ],
            id="question",
        ),
        pytest.param(
            FilesMissingPause(("hello.py",)),
            [FileChange(path="file.txt", added=1, removed=0, kind="created")],
            [
                "I've paused for now — hello.py was not created. "
                'Send "continue" and I\'ll pick up right where I left off.',
                "Changes so far:",
                "+1 −0 file.txt (created)",
            ],
            id="files-missing",
        ),
        pytest.param(
            FilesMissingPause(("calc.py", "test_calc.py")),
            [],
            [
                "I've paused for now — calc.py was not created; test_calc.py was not created. "
                'Send "continue" and I\'ll pick up right where I left off.',
            ],
            id="files-missing-two",
        ),
        pytest.param(
            Failed("the workspace folder was deleted"),
            [],
            ["I couldn't finish this one — the workspace folder was deleted."],
            id="failed",
        ),
        pytest.param(
            NoToolSupport("openai/smollm2", "reported"),
            [],
            [
                "I can't do this task with openai/smollm2: it does not take tools, so it can "
                "neither write a file nor run a command.",
                "How I know: its server reports that the chat template has no tool support "
                "(chat_template_caps in /props).",
                NO_TOOLS_FIX,
            ],
            id="no-tools-reported",
        ),
        pytest.param(
            NoToolSupport("openai/smollm2", "observed", 2),
            [],
            [
                "I can't do this task with openai/smollm2: it does not take tools, so it can "
                "neither write a file nor run a command.",
                'How I know: it answered 2 forced tool calls (tool_choice "required") with '
                "prose and no call.",
                NO_TOOLS_FIX,
            ],
            id="no-tools-observed",
        ),
        pytest.param(
            Aborted("stop"),
            CHANGES[:2],
            [
                "Stopped at your request — nothing was rolled back.",
                "Written before the stop:",
                *SUMMARY[:2],
            ],
            id="aborted-with-changes",
        ),
        pytest.param(
            Aborted("interrupt"),
            [],
            ["Stopped by an interrupt — nothing was rolled back.", "Nothing had been written yet."],
            id="aborted-nothing-written",
        ),
    ],
)
def test_banner_text(ending: Ending, changes: list[FileChange], lines: list[str]) -> None:
    assert banner_text(ending, changes).split("\n") == lines


NON_COMPLETIONS: list[Ending] = [
    StepBudgetPause(6),
    WorkNotStartedPause(Blocker("write_file", "denied")),
    WorkNotStartedPause(None),
    VerificationFailedPause(FAILED, stale=False),
    VerificationFailedPause(PASSED, stale=True),
    VerificationFailedPause(None, stale=False),
    TruncationPause(6),
    FilesMissingPause(("hello.py",)),
    Paused("memory pressure stayed high", None),
    BlockedPause("I'm not capable of providing a response."),
    BudgetPause(CostBudgetHit(0.52, 0.5)),
    BudgetPause(TokenBudgetHit(12_345, 10_000, ("ollama/llama3",))),
    DeclinedPause("nothing needs changing"),
    QuestionPause("What can I help you with today?"),
    ProviderFailure("boom", (ProviderAttempt("a", "b"),)),
    Failed("gone"),
    WindowTooSmall(2048, 1536, 512, 256, 1525, False, compact_tokens=808),
    NoToolSupport("openai/smollm2", "reported"),
    NoToolSupport("openai/smollm2", "observed", 2),
    Aborted("stop"),
    Aborted("interrupt"),
]


def test_non_completion_samples_cover_every_other_variant() -> None:
    completions = {VerifiedCompletion, NoChangesCompletion}
    assert {type(e) for e in NON_COMPLETIONS} == set(get_args(Ending)) - completions


@pytest.mark.parametrize("ending", [pytest.param(e, id=repr(e)) for e in NON_COMPLETIONS])
@pytest.mark.parametrize(
    "changes", [pytest.param([], id="no-changes"), pytest.param(CHANGES, id="changes")]
)
def test_no_pause_or_failure_reads_as_complete(ending: Ending, changes: list[FileChange]) -> None:
    text = banner_text(ending, changes)
    assert status_of(ending) != "completed"
    assert "Task complete" not in text
    assert "Response delivered" not in text
    assert "✓ Verified" not in text
    assert not text.startswith("✓")


@pytest.mark.parametrize("ending", [pytest.param(e, id=repr(e)) for e in NON_COMPLETIONS])
def test_a_banner_promises_a_resume_only_when_one_can_succeed(ending: Ending) -> None:
    text = banner_text(ending, CHANGES)
    if '"continue"' in text or "pick up right where I left off" in text:
        assert resumable(ending), text
    if not resumable(ending):
        assert "continue" not in text.lower() and "try again" not in text


def test_blocker_is_cut_to_120_characters_on_one_line() -> None:
    result = "line one\nline two " + "x" * 300
    text = banner_text(WorkNotStartedPause(Blocker("edit_file", result)), [])
    blocker = text.split("\n")[1]
    assert blocker == "What blocked it: edit_file: " + ("line one line two " + "x" * 300)[:120]


def test_blocked_reason_is_cut_to_120_characters_on_one_line() -> None:
    reason = "I can't\ngo on: " + "y" * 300
    line = banner_text(BlockedPause(reason), []).split("\n")[1]
    assert line == "What blocked it: " + ("I can't go on: " + "y" * 300)[:120]


def test_provider_lines_are_bounded() -> None:
    attempts = tuple(ProviderAttempt(f"p{i}", "r" * 200) for i in range(10))
    lines = banner_text(ProviderFailure("x", attempts), []).split("\n")
    provider_lines = [line for line in lines if line.startswith("- ")]
    assert len(provider_lines) == 8
    assert provider_lines[0] == "- p0: " + "r" * 140


def test_no_changes_banner_refuses_a_change_list() -> None:
    with pytest.raises(ValueError, match="non-empty change list"):
        banner_text(NoChangesCompletion("git"), CHANGES)


@pytest.mark.parametrize(
    ("change", "line"),
    [
        pytest.param(FileChange(path="a.py", added=1, removed=2), "+1 −2 a.py", id="modified"),
        pytest.param(
            FileChange(path="b c.md", added=5, removed=0, kind="created"),
            "+5 −0 b c.md (created)",
            id="created-with-space",
        ),
        pytest.param(
            FileChange(path="d.py", added=0, removed=9, kind="deleted"),
            "+0 −9 d.py (deleted)",
            id="deleted",
        ),
    ],
)
def test_change_line(change: FileChange, line: str) -> None:
    assert change_line(change) == line


FIXES = "Continuing cannot help with the same window. To fix it:"


@pytest.mark.parametrize(
    ("ending", "lines"),
    [
        pytest.param(
            WindowTooSmall(2048, 1536, 512, 256, 1525, False, compact_tokens=808),
            [
                "I couldn't finish this one — this model's 2,048-token window cannot hold the "
                "tool definitions (about 1,500 tokens).",
                "Every request carries the system prompt and the tool definitions, about 1,781 "
                "tokens before any conversation; the window leaves 1,536 for them after 512 for "
                "the reply.",
                FIXES,
                "- use a model or server with a larger window (for llama-server: `-c 8192`);",
                "- or use the compact tool set: MERCURY_TOOL_SET=compact (about 808 tokens).",
                "Set MERCURY_CONTEXT_WINDOW only if the server really has more than 2,048 tokens.",
            ],
            id="full-set-compact-would-fit",
        ),
        pytest.param(
            WindowTooSmall(1024, 768, 256, 256, 808, True),
            [
                "I couldn't finish this one — this model's 1,024-token window cannot hold the "
                "tool definitions (about 810 tokens), even in their compact form.",
                "Every request carries the system prompt and the tool definitions, about 1,064 "
                "tokens before any conversation; the window leaves 768 for them after 256 for "
                "the reply.",
                FIXES,
                "- use a model or server with a larger window (for llama-server: `-c 8192`).",
                "Set MERCURY_CONTEXT_WINDOW only if the server really has more than 1,024 tokens.",
            ],
            id="compact-set-too",
        ),
        pytest.param(
            WindowTooSmall(4096, 3072, 1024, 256, 808, True, task_tokens=9000,
                           larger_window=32768),
            [
                "I couldn't finish this one — this model's 4,096-token window cannot hold the "
                "task with the tool definitions (about 10,100 tokens for a budget of 3,072).",
                "Every request carries the system prompt and the tool definitions (about 1,064 "
                "tokens) and the task, about 10,064 tokens before any conversation; the window "
                "leaves 3,072 for them after 1,024 for the reply.",
                FIXES,
                "- use a model or server with a larger window (for llama-server: `-c 32768`);",
                "- or shorten the task (about 9,000 tokens).",
                "Set MERCURY_CONTEXT_WINDOW only if the server really has more than 4,096 tokens.",
            ],
            id="task-too",
        ),
    ],
)
def test_the_small_window_failure_names_the_numbers_and_the_fixes(
    ending: WindowTooSmall, lines: list[str]
) -> None:
    assert banner_text(ending, []).split("\n") == lines
    assert status_of(ending) == "failed"
    assert 'Send "continue"' not in banner_text(ending, CHANGES)
    assert "conversation is still too large" not in banner_text(ending, [])


@pytest.mark.parametrize(
    ("ending", "changes", "runs", "lines"),
    [
        pytest.param(NoChangesCompletion("snapshot"), [], 2, [
            "Response delivered · no file changes (snapshot-verified)",
            "Also: ran code in your kernel (2 runs)"], id="no-files-but-kernel-code"),
        pytest.param(Aborted(by="stop"), CHANGES[:1], 1, [
            "Stopped at your request — nothing was rolled back.", "Written before the stop:",
            change_line(CHANGES[0]), "Also: ran code in your kernel (1 run)"],
            id="stopped-after-kernel-code"),
        pytest.param(NoChangesCompletion("snapshot"), [], 0, [
            "Response delivered · no file changes (snapshot-verified)"], id="no-kernel-code"),
    ],
)
def test_the_change_summary_says_it_ran_code_in_the_kernel(
        ending: Ending, changes: list[FileChange], runs: int, lines: list[str]) -> None:
    assert banner_text(ending, changes, kernel_runs=runs).splitlines() == lines
