"""Lexing a command line and finding the simple commands whose status decides the line's."""

from __future__ import annotations

import pytest

from mercury_nb.contract.gate.command_line import Token, gating_commands, lex, strip_assignments


@pytest.mark.parametrize(
    ("command", "tokens"),
    [
        pytest.param("pytest -q", [("pytest", False), ("-q", False)], id="words"),
        pytest.param(
            'echo "a && b"; ls',
            [("echo", False), ("a && b", False), (";", True), ("ls", False)],
            id="quoted-operator-is-a-word",
        ),
        pytest.param("echo '&&' x", [("echo", False), ("&&", False), ("x", False)], id="single"),
        pytest.param(
            "pytest 2>&1 | tail",
            [("pytest", False), (">&", True), ("1", False), ("|", True), ("tail", False)],
            id="fd-number-dropped",
        ),
        pytest.param("a\\ b c", [("a b", False), ("c", False)], id="backslash-space"),
        pytest.param('FOO="x y" pytest', [("FOO=x y", False), ("pytest", False)], id="assign"),
        pytest.param("pytest # run it", [("pytest", False)], id="comment"),
        pytest.param("a\nb", [("a", False), (";", True), ("b", False)], id="newline"),
        pytest.param("x=$(pwd) pytest", [("x=$(pwd)", False), ("pytest", False)], id="subst"),
    ],
)
def test_lex(command: str, tokens: list[tuple[str, bool]]) -> None:
    assert lex(command) == tuple(Token(text, op) for text, op in tokens)


@pytest.mark.parametrize(
    "command",
    [
        pytest.param("echo 'open", id="single"),
        pytest.param('echo "open', id="double"),
        pytest.param("echo $(open", id="substitution"),
    ],
)
def test_lex_rejects_unclosed_quotes(command: str) -> None:
    with pytest.raises(ValueError, match="unclosed"):
        lex(command)


@pytest.mark.parametrize(
    ("command", "gating"),
    [
        pytest.param("pytest", [("pytest",)], id="single"),
        pytest.param("cd x && pytest", [("cd", "x"), ("pytest",)], id="and-chain"),
        pytest.param("pytest && echo ok", [("pytest",), ("echo", "ok")], id="and-after"),
        pytest.param("pytest | tail -5", [("tail", "-5")], id="piped-status-is-tails"),
        pytest.param("pytest || true", [], id="or-masks"),
        pytest.param("pytest; echo done", [("echo", "done")], id="semicolon"),
        pytest.param("cd x; pytest", [("pytest",)], id="semicolon-before"),
        pytest.param("pytest;", [("pytest",)], id="trailing-semicolon"),
        pytest.param("pytest &", [], id="background"),
        pytest.param("! pytest", [], id="negated"),
        pytest.param("(cd a && make)", [("cd", "a"), ("make",)], id="subshell"),
        pytest.param("(pytest; echo)", [("echo",)], id="subshell-semicolon"),
        pytest.param("pytest > out.txt 2>&1", [("pytest",)], id="redirections"),
        pytest.param("echo 'unclosed", [], id="unparsable"),
        pytest.param("", [], id="empty"),
    ],
)
def test_gating_commands(command: str, gating: list[tuple[str, ...]]) -> None:
    assert gating_commands(command) == tuple(gating)


@pytest.mark.parametrize(
    ("words", "rest"),
    [
        pytest.param(("FOO=1", "pytest"), ("pytest",), id="one"),
        pytest.param(("A=1", "B+=x", "make"), ("make",), id="two"),
        pytest.param(("pytest", "X=1"), ("pytest", "X=1"), id="only-leading"),
        pytest.param(("=x", "y"), ("=x", "y"), id="not-a-name"),
    ],
)
def test_strip_assignments(words: tuple[str, ...], rest: tuple[str, ...]) -> None:
    assert strip_assignments(words) == rest
