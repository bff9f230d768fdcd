"""How plainly a work task asks for a change: the rules one by one (the big table of
phrasings, read with the decision they feed, is in tests/contract/turns/test_guard_trigger.py)."""

from __future__ import annotations

import pytest

from mercury_nb.contract.gate.change_demand import ChangeDemand, change_demand, demanding_clause

D = ChangeDemand.DEMANDED
U = ChangeDemand.UNCLEAR


@pytest.mark.parametrize(("task", "demand"), [
    # rule 1: a file to make, or a run, whatever the verbs say
    ("Summarize README.md into SUMMARY.md", D),
    ("Translate README.md into README.fr.md", D),
    ("Run hello.py", D),
    ("tail -n 50 server.log", D),
    # rule 2: a changing verb opens some clause, after lead-ins and in any sentence
    ("Please go ahead and refactor parse()", D),
    ("I need you to delete old.log", D),
    ("Read utils.py, then add a docstring to each function", D),
    ("The tests fail on CI. Please fix them.", D),
    ("Look at the notebook and rename the first column", D),
    # a sentence that asks back is a question, not an order
    ("Should I fix parse.py first?", U),
    # the same verbs only looking, or making words for the reader
    ("Write me a summary of notes/", U),
    ("Make sure nothing in data/ is older than a week", U),
    ("Add up the hours in timesheet/", U),
    ("Comment on the structure of src/", U),
    ("Open the notebook and tell me what it plots", U),
    ("Check the port the server uses in config.yaml", U),
    # no verb at all
    ("notes/ budget mentions?", U),
])
def test_each_rule(task: str, demand: ChangeDemand) -> None:
    assert change_demand(task, "execute") is demand


@pytest.mark.parametrize("task", ["Fix the failing test", "Create hello.py", "ls -la"])
def test_chat_mode_demands_nothing(task: str) -> None:
    assert change_demand(task, "chat") is U


@pytest.mark.parametrize(("clause", "demands"), [
    ("fix it", True),
    ("then update its total", True),
    ("please kill whatever holds port 8000", True),
    ("start the worker", True),
    ("write me a poem", False),
    ("tell me which file mentions the budget", False),
    ("check the server", False),
    ("open the notebook", False),
    ("don't change anything", False),
    ("", False),
])
def test_a_clause_demands_by_its_opening_verb(clause: str, demands: bool) -> None:
    assert demanding_clause(clause) is demands
