"""What a command's environment keeps: a table over the one decision (contract/command_env)."""

from __future__ import annotations

import pytest

from mercury_nb.contract.command_env import PROVIDER_KEY_NAMES, command_environment, withholds
from mercury_nb.contract.setup.keys import KEY_VARIABLES

KEY = "sk-configured-key-0123456789"


@pytest.mark.parametrize(
    ("name", "value", "pass_env", "secrets", "withheld"),
    [
        pytest.param("OPENAI_API_KEY", "sk-abc123456", (), (), True, id="provider-key"),
        pytest.param("MERCURY_API_KEY", "mk-abc123456", (), (), True, id="mercury-key"),
        pytest.param("ANTHROPIC_AUTH_TOKEN", "tok-123456", (), (), True, id="provider-token"),
        pytest.param("HF_TOKEN", "hf_abcdef", (), (), True, id="hf-token"),
        pytest.param("GITHUB_TOKEN", "ghp_x", (), (), True, id="any-token"),
        pytest.param("AWS_SECRET_ACCESS_KEY", "abc", (), (), True, id="secret-infix"),
        pytest.param("DB_PASSWORD", "pw", (), (), True, id="password"),
        pytest.param("FTP_PASSWD", "pw", (), (), True, id="passwd"),
        pytest.param("STRIPE_KEY", "k", (), (), True, id="key-suffix"),
        pytest.param("TOKEN", "t", (), (), True, id="bare-token"),
        pytest.param("api_key", "k", (), (), True, id="lower-case"),
        pytest.param("PATH", "/usr/bin", (), (), False, id="path"),
        pytest.param("HOME", "/root", (), (), False, id="home"),
        pytest.param("MAX_TOKENS", "10", (), (), False, id="plural-not-a-secret"),
        pytest.param("MERCURY_HOME", "/x", (), (), False, id="mercury-setting"),
        pytest.param("KEYBOARD", "us", (), (), False, id="key-prefix"),
        pytest.param("OPENAI_API_KEY", "sk-abc123456", ("OPENAI_API_KEY",), (), False,
                     id="passed-deliberately"),
        pytest.param("DB_PASSWORD", "pw", ("OPENAI_API_KEY",), (), True, id="passed-other"),
        pytest.param("LLM", KEY, (), (KEY,), True, id="holds-the-configured-key"),
        pytest.param("LLM_URL", f"https://x/?k={KEY}", (), (KEY,), True, id="carries-the-key"),
        pytest.param("LLM", KEY, ("LLM",), (KEY,), False, id="configured-key-passed"),
        pytest.param("SHORT", "abc", (), ("abc",), False, id="short-secret-ignored"),
        pytest.param("PGPASSWORD", "pw", (), (), True, id="password-without-underscore"),
        pytest.param("MYSQL_PWD", "pw", (), (), True, id="pwd-suffix"),
        pytest.param("PWD", "/work", (), (), False, id="the-working-folder"),
        pytest.param("OLDPWD", "/work", (), (), False, id="the-last-folder"),
        pytest.param("OPENAI_API_KEY_2", "sk-abc123456", (), (), True, id="numbered-key"),
        pytest.param("APIKEY", "k", (), (), True, id="bare-apikey"),
        pytest.param("FOO", "ghp_" + "a1" * 18, (), (), True, id="key-shaped-value"),
        pytest.param("FOO", "sk-" + "Zq9XwYvUtS8rQpOnMlK7jIhGfEdCbA", (), (), True,
                     id="provider-key-shaped-value"),
        pytest.param("GREETING", "hello world", (), (), False, id="a-plain-value"),
        pytest.param("DATABASE_URL", "postgres://app@db/app", (), (), False,
                     id="a-url-without-a-key"),
    ],
)
def test_what_a_command_is_not_given(name: str, value: str, pass_env: tuple[str, ...],
                                     secrets: tuple[str, ...], withheld: bool) -> None:
    assert withholds(name, value, pass_env=pass_env, secrets=secrets) is withheld
    decided = command_environment({name: value}, pass_env=pass_env, secrets=secrets)
    assert (name in decided.env) is not withheld
    assert decided.withheld == ((name,) if withheld else ())


def test_every_provider_key_variable_is_withheld() -> None:
    names = {name for names in KEY_VARIABLES.values() for name in names}
    assert names <= PROVIDER_KEY_NAMES
    decided = command_environment({name: "value-123456" for name in names} | {"LANG": "C"})
    assert decided.env == {"LANG": "C"}
    assert set(decided.withheld) == names


def test_the_rest_is_passed_unchanged_in_order() -> None:
    environ = {"B": "2", "OPENAI_API_KEY": "sk-x", "A": "1 "}
    decided = command_environment(environ)
    assert list(decided.env.items()) == [("B", "2"), ("A", "1 ")]
