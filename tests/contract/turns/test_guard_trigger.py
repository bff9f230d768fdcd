"""The narration guard's first read of a work task's turn that changed nothing: an answer, a
declined change, or narration to push. One table of real-looking phrasings of both kinds —
questions phrased as instructions, and tasks that plainly demand a change — read both ways:
each task's demand, then the decision for the replies a model gives."""

from __future__ import annotations

import pytest

from mercury_nb.contract.config import MercuryConfig
from mercury_nb.contract.endings import DeclinedPause, NoChangesCompletion
from mercury_nb.contract.escalation.guard_texts import NO_CHANGE_OFFER_DIRECTIVE
from mercury_nb.contract.gate.change_demand import ChangeDemand, change_demand
from mercury_nb.contract.gate.task_intent import TaskIntent, classify_intent
from mercury_nb.contract.turns.final_reply import FinishCall
from mercury_nb.contract.turns.guard_trigger import (
    NO_REASON_GIVEN,
    AnswerDelivered,
    ChangeDeclined,
    KeepGuarding,
    ReplyDecision,
    ReplyObservation,
    read_reply,
)
from mercury_nb.contract.turns.router_state import (
    FinishWith,
    GuardRound,
    Measured,
    RouterState,
    TurnFacts,
)
from mercury_nb.contract.turns.turn_router import step_router
from mercury_nb.contract.vocabulary import TurnVerdict

UNCLEAR = ChangeDemand.UNCLEAR
DEMANDED = ChangeDemand.DEMANDED

QUESTIONS_AS_INSTRUCTIONS: tuple[str, ...] = (
    "Look through the notes folder and tell me which file mentions the budget",
    "Look through notes/ and tell me which file mentions the budget",
    "Can you look through notes/ and tell me which file mentions the budget?",
    "Find which file in notes/ mentions the budget",
    "Don't change anything, just tell me which file mentions the budget",
    "Check the logs folder and tell me what went wrong",
    "Check whether port 8080 is free",
    "Check if any notebook still imports the old module",
    "Check the requirements file for pinned versions",
    "Check the notebook's outputs for errors and summarise them",
    "Open the notebook and tell me what the last cell does",
    "List the files in data/",
    "Search the repo for hard-coded passwords",
    "Find the function that parses dates",
    "Find where the timeout is set in the code",
    "Find every place in the code that reads the API key",
    "Find out which test is the slowest",
    "Figure out which dependency pulls in six",
    "Review utils.py for bugs",
    "Review the open TODOs in notes/todo.md",
    "Read config.yaml and tell me the default timeout",
    "Read the README and list the setup steps",
    "Scan the tests folder and tell me which tests are skipped",
    "Look at the failing test and tell me why it fails",
    "Look in data/ for the file with the most rows",
    "Look for TODO comments in the code and list them",
    "Look through src/ for uses of the deprecated parse_date function",
    "Look through the notebooks and tell me which one trains the model",
    "Please look at app.py and let me know if the routes are authenticated",
    "Without editing any file, list the notebooks that import pandas",
    "Inspect the dataframe in analysis.ipynb and report its shape",
    "Inspect the variables in the kernel and tell me which dataframe is largest",
    "Compare config.dev.yaml and config.prod.yaml",
    "Count the lines of code in src/",
    "Print the first 10 rows of data.csv",
    "Show the contents of config.yaml",
    "Examine the error in the last traceback",
    "Examine the dependencies in pyproject.toml for conflicts",
    "Identify the slowest function in profile.txt",
    "Locate the config file for the app",
    "Study the module structure of the package",
    "Go over the notebook and point out cells that never run",
    "Go through the CSV files and report which have missing values",
    "Go through the test files and tell me which ones use fixtures",
    "Browse the docs folder and tell me where installation is covered",
    "See if main.py handles an empty input file",
    "Verify that the API key is not committed anywhere in the repo",
    "Skim CHANGELOG.md and say when the last release was",
    "Analyse sales.csv and report the top three regions",
    "Translate README.md into French",
    "Write me a summary of the files in notes/",
    "README.md typo on line 3",
    "The tests in tests/ are failing",
)

CHANGE_DEMANDS: tuple[str, ...] = (
    "Create hello.py that prints hello world, and run it.",
    "Create a .gitignore for Python",
    "Write notes.rst with three ideas",
    "Write a function that reverses a string",
    "Save the table as results.xlsx",
    "Summarize README.md into SUMMARY.md",
    "Generate a requirements.txt for this project",
    "Fix the failing test",
    "Find and fix the bug in parse.py",
    "Can you fix the bug in parse()?",
    "Explain the bug in parse.py and fix it",
    "Tell me what is wrong with utils.py and fix it.",
    "Look at the failing test and make it pass",
    "Look through the notes folder and fix the budget total in the file that mentions it",
    "Which file in notes/ mentions the budget? Fix its total.",
    "Read config.yaml and set the timeout to 30",
    "Update the budget in notes/q3.md",
    "Please update the changelog",
    "Add type hints to utils.py",
    "Add a cell to the notebook that loads the CSV",
    "Refactor the loop in main() into a helper",
    "Implement the TODOs in app.py",
    "Remove unused imports from app.py",
    "Delete the build directory",
    "Rename utils.py to helpers.py",
    "Merge notes/a.md and notes/b.md into notes/all.md",
    "Copy config.yaml to config.bak.yaml",
    "Convert data.csv to JSON",
    "Sort the entries in notes/todo.md by date",
    "Clean up the notebook",
    "Document the functions in utils.py",
    "Bump the version to 1.2.0 in pyproject.toml",
    "Make the tests pass",
    "Debug the failing import in main.py",
    "Plot the loss curve from history.csv",
    "Install requests and add it to requirements.txt",
    "Run the tests and tell me which fail",
    "Run the shell command: sleep 300",
    "Restart the kernel and rerun the notebook",
    "Kill the process on port 8000",
    "Start the server and check the port",
    "Check the logs and restart the worker if it crashed",
    "Is port 8000 free? If not, kill whatever holds it.",
    "ls -la",
)

TABLE = [pytest.param(t, UNCLEAR, id=f"unclear: {t}") for t in QUESTIONS_AS_INSTRUCTIONS] + [
    pytest.param(t, DEMANDED, id=f"demanded: {t}") for t in CHANGE_DEMANDS
]

ANSWER = "notes/q3.md mentions the budget: it puts Q3 spending at 4,000 EUR."
NARRATION = "Sure! I'll look through the notes folder and update the file that mentions it."


def test_the_table_is_big_balanced_and_all_work() -> None:
    assert len(QUESTIONS_AS_INSTRUCTIONS) >= 40 and len(CHANGE_DEMANDS) >= 40
    everything = QUESTIONS_AS_INSTRUCTIONS + CHANGE_DEMANDS
    assert len(set(everything)) == len(everything)
    # every phrasing reads as work: without this decision the guard would force each one
    assert [t for t in everything if classify_intent(t, "execute") is not TaskIntent.WORK] == []


@pytest.mark.parametrize(("task", "demand"), TABLE)
def test_each_phrasing_reads_as_its_demand(task: str, demand: ChangeDemand) -> None:
    assert change_demand(task, "execute") is demand


def _decide(task: str, reply: str = ANSWER, *, investigations: int = 2, final: bool = True,
            finish: FinishCall | None = None) -> ReplyDecision:
    return read_reply(ReplyObservation(change_demand(task, "execute"), final, reply, finish,
                                       investigations))


@pytest.mark.parametrize(("task", "demand"), TABLE)
def test_an_answer_after_investigation_ends_only_a_task_that_demands_no_change(
    task: str, demand: ChangeDemand
) -> None:
    expected = AnswerDelivered("investigated") if demand is UNCLEAR else KeepGuarding(False)
    assert _decide(task) == expected


@pytest.mark.parametrize(("task", "demand"), TABLE)
def test_narration_keeps_the_guard_offering_no_change_only_where_unclear(
    task: str, demand: ChangeDemand
) -> None:
    assert _decide(task, NARRATION) == KeepGuarding(offer_no_change=demand is UNCLEAR)


@pytest.mark.parametrize(("task", "demand"), TABLE)
def test_an_answer_nothing_was_read_for_gets_the_offered_round(
    task: str, demand: ChangeDemand
) -> None:
    assert _decide(task, investigations=0) == KeepGuarding(offer_no_change=demand is UNCLEAR)


@pytest.mark.parametrize(("task", "demand"), TABLE)
def test_the_typed_no_change_answers_or_declines(task: str, demand: ChangeDemand) -> None:
    decision = _decide(task, investigations=0,
                       finish=FinishCall("no_change", "Nothing needs changing."))
    expected: ReplyDecision = (AnswerDelivered("no-change") if demand is UNCLEAR
                               else ChangeDeclined("Nothing needs changing."))
    assert decision == expected


@pytest.mark.parametrize("status", ["done", "blocked", "question"])
def test_only_the_no_change_status_is_the_typed_choice(status: str) -> None:
    finish = FinishCall(status, ANSWER)  # type: ignore[arg-type]
    task = CHANGE_DEMANDS[0]
    assert _decide(task, finish=finish, investigations=0) == KeepGuarding(False)


def test_a_declined_change_without_words_says_so() -> None:
    decision = _decide(CHANGE_DEMANDS[0], finish=FinishCall("no_change"))
    assert decision == ChangeDeclined(NO_REASON_GIVEN)


@pytest.mark.parametrize("task", QUESTIONS_AS_INSTRUCTIONS[:5])
def test_a_turn_that_did_not_end_in_a_final_reply_is_no_answer(task: str) -> None:
    assert _decide(task, final=False) == KeepGuarding(True)
    no_change = FinishCall("no_change", ANSWER)
    assert _decide(task, final=False, finish=no_change) == KeepGuarding(True)


@pytest.mark.parametrize("reply", [
    "",
    "OK.",
    "Done!",
    "I've updated notes/q3.md with the new budget.",
    "Let me look through the notes folder first.",
    "I'm sorry, but I can't access your files.",
    "Which folder do you mean?",
])
def test_replies_that_are_no_answer_keep_the_guard(reply: str) -> None:
    assert _decide(QUESTIONS_AS_INSTRUCTIONS[0], reply) == KeepGuarding(True)


# --- through the turn router -------------------------------------------------------------

NOTES_TASK = QUESTIONS_AS_INSTRUCTIONS[0]
HELLO_TASK = CHANGE_DEMANDS[0]


def _start(task: str) -> tuple[RouterState, MercuryConfig]:
    config = MercuryConfig(model="openai/m", retry_base_s=0.0)
    return RouterState.start(task, config), config


def _stop(reply: str = ANSWER, *, investigations: int = 2, finish: FinishCall | None = None,
          forced: bool = False) -> TurnFacts:
    return TurnFacts(verdict=TurnVerdict.TEXT_STOP, reply_text=reply, finish=finish,
                     measured=Measured((), "git"), investigations=investigations,
                     forced=forced, called_tools=True)


def test_an_investigated_answer_is_delivered_with_no_guard_round() -> None:
    state, config = _start(NOTES_TASK)
    after, decision = step_router(state, _stop(), config)
    assert decision == FinishWith(NoChangesCompletion("git"))
    assert not after.guard.active


def test_narration_of_an_unclear_task_gets_the_offered_round_then_the_typed_answer_ends_it(
) -> None:
    state, config = _start(NOTES_TASK)
    state, decision = step_router(state, _stop(NARRATION, investigations=0), config)
    assert isinstance(decision, GuardRound)
    assert decision.round.offer_no_change
    assert (decision.directive.tool_choice, decision.directive.must_mutate) == ("required", False)
    assert decision.directive.messages[0]["content"] == NO_CHANGE_OFFER_DIRECTIVE
    typed = FinishCall("no_change", ANSWER)
    state, decision = step_router(state, _stop(ANSWER, investigations=0, finish=typed,
                                               forced=True), config)
    assert decision == FinishWith(NoChangesCompletion("git"))
    assert not state.guard.active and state.guard_round is None


def test_a_change_task_that_narrates_is_forced_as_ever() -> None:
    state, config = _start(HELLO_TASK)
    _, decision = step_router(state, _stop("I'll create hello.py now.", investigations=3),
                              config)
    assert isinstance(decision, GuardRound)
    assert not decision.round.offer_no_change
    assert (decision.directive.tool_choice, decision.directive.must_mutate) == ("required", True)


@pytest.mark.parametrize("in_round", [False, True])
def test_a_change_task_declined_with_no_change_pauses_honestly(in_round: bool) -> None:
    state, config = _start(HELLO_TASK)
    if in_round:
        state, decision = step_router(state, _stop("Here is the code."), config)
        assert isinstance(decision, GuardRound)
    typed = FinishCall("no_change", "A hello world needs no file.")
    after, decision = step_router(state, _stop(finish=typed, forced=in_round), config)
    assert decision == FinishWith(DeclinedPause("A hello world needs no file."))
    assert not after.guard.active and after.guard_round is None
