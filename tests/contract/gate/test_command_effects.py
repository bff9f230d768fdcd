"""Table tests for telling read-only shell commands from ones that may write."""

import pytest

from mercury_nb.contract.gate.command_effects import is_read_only_command


@pytest.mark.parametrize(
    ("command", "read_only"),
    [
        pytest.param("ls -la", True, id="ls"),
        pytest.param("cat a.py | grep def", True, id="pipe-of-readers"),
        pytest.param("cd src && ls", True, id="cd-then-ls"),
        pytest.param("git status", True, id="git-status"),
        pytest.param("git diff --stat", True, id="git-diff"),
        pytest.param("git commit -am x", False, id="git-commit-writes"),
        pytest.param("echo hi > a.txt", False, id="redirect-writes"),
        pytest.param("cat a | tee b", False, id="tee-writes"),
        pytest.param("sed -i s/a/b/ f.py", False, id="sed-in-place-writes"),
        pytest.param("sed s/a/b/ f.py", True, id="sed-to-stdout"),
        pytest.param("find . -name '*.pyc' -delete", False, id="find-delete"),
        pytest.param("find . -name '*.py'", True, id="find-list"),
        pytest.param("python gen.py", False, id="unknown-script-may-write"),
        pytest.param("rm -rf build", False, id="rm"),
        pytest.param("FOO=1 ls", True, id="env-prefix"),
        pytest.param("echo $(touch x)", False, id="command-substitution"),
        pytest.param("ls 'unterminated", False, id="unparseable"),
        pytest.param("", False, id="empty"),
    ],
)
def test_read_only_table(command: str, read_only: bool) -> None:
    assert is_read_only_command(command) is read_only
