"""The permission decision and allow-rule matching, as tables."""

from __future__ import annotations

import pytest

from mercury_nb.contract.permissions import (
    Allow,
    Ask,
    Deny,
    action_for_tool,
    command_parts,
    decide,
    exact_rule,
    matches_rules,
    offers_mutating_tools,
)


@pytest.mark.parametrize(("command", "rules", "expected"), [
    ("pytest -q", ["pytest*"], True),
    ("pytest; curl evil", ["pytest*"], False),
    ("pytest && curl evil", ["pytest*"], False),
    ("pytest || curl evil", ["pytest*"], False),
    ("pytest | curl evil", ["pytest*"], False),
    ("pytest & curl evil", ["pytest*"], False),
    ("pytest\ncurl evil", ["pytest*"], False),
    ("pytest `curl evil`", ["pytest*"], False),
    ("pytest $(curl evil)", ["pytest*"], False),
    ("pytest && pytest -x", ["pytest*"], True),
    ("python -m pytest -q", ["python -m pytest*"], True),
    ("python  -m   pytest", ["python -m pytest*"], True),
    ("pip install requests", ["python -m pytest*"], False),
    ("pip install requests", ["pip install requests"], True),
    ("pip install requests numpy", ["pip install requests"], False),
    ("echo 'a; curl evil'", ["echo *"], True),
    ('echo "a && b"', ["echo *"], True),
    ('echo "$(curl evil)"', ["echo *"], False),
    ("echo '$(not run)'", ["echo *"], True),
    ("echo 'unclosed", ["echo *"], False),
    ("ls", [], True),
    ("ls -la src", [], True),
    ("cat notes.md | head -5", [], True),
    ("git status", [], True),
    ("git diff HEAD~1", [], True),
    ("git log --oneline", [], True),
    ("git diff --output=notes.md", [], False),
    ("git log --output notes.md -1", [], False),
    ("git diff --out=notes.md", [], False),
    ("git diff --output=x", ["git diff *"], True),
    ("cat --output-is-not-git", [], True),
    ("cat ~/.ssh/id_ed25519", [], False),
    ("cat /etc/passwd", [], False),
    ("head -n 5 ../secrets.txt", [], False),
    ("cat sub/../../x", [], False),
    ('cat "$HOME/.netrc"', [], False),
    ("ls --color=/x", [], False),
    ("head -n 5 notes/todo.md", [], True),
    ("cat /etc/passwd", ["cat /etc/passwd"], True),
    ("git diff --no-index /etc/passwd a", [], False),
    ("pwd", [], True),
    ("git commit -m x", [], False),
    ("cat a > b", [], False),
    ("lsblk", [], False),
    ("ls; rm -rf x", [], False),
    ("", ["*"], False),
    ("cat <~/.netrc", [], False),  # an input redirection reads from anywhere
    ("head -c 100 <~/.ssh/id_rsa", [], False),
    ("cat x<~/.netrc", [], False),
    ("cat .?/.?/etc/passwd", [], False),  # patterns the shell expands to ..
    ("cat .[.]/.[.]/etc/passwd", [], False),
    ("ls *.py", [], True),
    ("python -m pytest -q 2>&1", ["python -m pytest*"], True),  # the issue's own rule
    ("python -m pytest -q >&2", ["python -m pytest*"], True),
    ("python -m pytest > ~/.bashrc", ["python -m pytest*"], False),  # writes a file
    ("python -m pytest -q 2>&1 >out.txt", ["python -m pytest*"], False),
    ("python -m pytest > log.txt", ["python -m pytest > log.txt"], True),
    ("ls 2>&1", [], False),
])
def test_rule_matching(command: str, rules: list[str], expected: bool) -> None:
    assert matches_rules(command, rules) is expected


@pytest.mark.parametrize(("command", "parts"), [
    ("a; b && c || d | e", ("a", "b", "c", "d", "e")),
    ("a;;  ", ("a",)),
    ("echo 'x|y'", ("echo 'x|y'",)),
    ("a `b`", None),
    ("a 2>&1 && b", ("a 2>&1", "b")),
    ("a &> f; b", ("a &> f", "b")),
    ("a >| f", ("a >| f",)),
    ("a 3<&- | b", ("a 3<&-", "b")),
    ("a & b", ("a", "b")),
    ("a |& b", ("a", "b")),
])
def test_command_parts(command: str, parts: tuple[str, ...] | None) -> None:
    assert command_parts(command) == parts


@pytest.mark.parametrize(("command", "rule"), [
    ("pip install requests", "pip install requests"),
    ("ls *.py", "ls [*].py"),
    ("pytest; curl evil", None),
    ("a $(b)", None),
])
def test_exact_rule_allows_exactly_the_command(command: str, rule: str | None) -> None:
    assert exact_rule(command) == rule
    if rule is not None:
        assert matches_rules(command, [rule])


PIP = action_for_tool("run_command", "pip install requests")
LS = action_for_tool("run_command", "ls -la")
EDIT = action_for_tool("edit_file", detail="notes.md")
NB = action_for_tool("edit_notebook_cell", detail="a.ipynb")
KERNEL = action_for_tool("run_in_kernel")
CELLS = action_for_tool("run_cells")
OUTSIDE = action_for_tool("mcp_search")
READ = action_for_tool("read_file")
ASK_PIP = Ask('run "pip install requests"', "pip install requests")


@pytest.mark.parametrize(("mode", "rules", "action", "expected"), [
    ("auto", [], PIP, Allow()),
    ("auto", [], KERNEL, Allow()),
    ("edits", [], PIP, ASK_PIP),
    ("edits", ["pip install *"], PIP, Allow()),
    ("edits", [], LS, Allow()),
    ("edits", [], EDIT, Allow()),
    ("edits", [], NB, Allow()),
    ("edits", [], action_for_tool("write_file", detail=".git/config"),
     Ask("write_file .git/config", None)),
    ("edits", [], action_for_tool("create_file", detail="sub/.git/hooks/pre-commit"),
     Ask("create_file sub/.git/hooks/pre-commit", None)),
    ("edits", [], action_for_tool("edit_file", detail="sub\\.GIT\\config"),
     Ask("edit_file sub\\.GIT\\config", None)),
    ("edits", [], action_for_tool("write_file", detail=".github/workflows/ci.yml"), Allow()),
    ("edits", [], action_for_tool("delete_notebook_cell", detail="a.ipynb"), Allow()),
    ("edits", [], action_for_tool("run_cells_in_kernel"),
     Ask("run_cells_in_kernel (run code in a kernel)", "tool:run_cells_in_kernel")),
    ("auto", [], action_for_tool("write_file", detail=".git/config"), Allow()),
    ("edits", [], KERNEL, Ask("run_in_kernel (run code in a kernel)", "tool:run_in_kernel")),
    ("edits", [], CELLS, Ask("run_cells (run code in a kernel)", "tool:run_cells")),
    ("edits", [], OUTSIDE, Ask("use the tool mcp_search", "tool:mcp_search")),
    ("edits", ["tool:run_cells"], CELLS, Allow()),
    ("edits", ["tool:run_*"], KERNEL, Allow()),
    ("edits", ["tool:mcp_*"], OUTSIDE, Allow()),
    ("edits", ["run_cells"], CELLS, Ask("run_cells (run code in a kernel)", "tool:run_cells")),
    ("edits", ["tool:run_cells"], KERNEL,
     Ask("run_in_kernel (run code in a kernel)", "tool:run_in_kernel")),
    ("edits", ["tool:run_command", "tool:*"], PIP, ASK_PIP),
    ("read-only", ["tool:*"], CELLS, Deny("the task runs in read-only mode: it may not "
                                          "run_cells (run code in a kernel)")),
    ("ask", ["tool:edit_file"], EDIT, Allow()),
    ("edits", [], READ, Allow()),
    ("ask", [], EDIT, Ask("edit_file notes.md", None)),
    ("ask", [], NB, Ask("edit_notebook_cell a.ipynb", None)),
    ("ask", [], PIP, ASK_PIP),
    ("ask", ["pip install *"], PIP, Allow()),
    ("ask", [], READ, Allow()),
    ("read-only", [], PIP, Deny('the task runs in read-only mode: it may not run '
                                '"pip install requests"')),
    ("read-only", ["*"], LS, Deny('the task runs in read-only mode: it may not run "ls -la"')),
    ("read-only", [], EDIT, Deny("the task runs in read-only mode: it may not edit_file "
                                 "notes.md")),
    ("read-only", [], READ, Allow()),
])
def test_decision(mode: str, rules: list[str], action: object, expected: object) -> None:
    assert decide(mode, rules, action) == expected  # type: ignore[arg-type]


@pytest.mark.parametrize(("mode", "offered"), [
    ("read-only", False), ("ask", True), ("edits", True), ("auto", True)])
def test_read_only_offers_no_mutating_tools(mode: str, offered: bool) -> None:
    assert offers_mutating_tools(mode) is offered  # type: ignore[arg-type]
