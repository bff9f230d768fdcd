"""Table tests of the one redaction mask (issue 11.1)."""

from __future__ import annotations

import pytest

from mercury_nb.contract.redaction import (
    displayable,
    env_secrets,
    is_secret_name,
    redact,
    redact_data,
)


@pytest.mark.parametrize(
    ("name", "secret"),
    [
        pytest.param("OPENAI_API_KEY", True, id="api-key"),
        pytest.param("GITHUB_TOKEN", True, id="token"),
        pytest.param("AWS_SECRET_ACCESS_KEY", True, id="secret-infix"),
        pytest.param("CLIENT_SECRET", True, id="secret-suffix"),
        pytest.param("DB_PASSWORD", True, id="password"),
        pytest.param("PGPASSWORD", True, id="password-without-underscore"),
        pytest.param("MYSQL_PWD", True, id="pwd"),
        pytest.param("PWD", False, id="the-working-folder"),
        pytest.param("OPENAI_API_KEY_2", True, id="numbered"),
        pytest.param("PASSWORD", True, id="bare-password"),
        pytest.param("TOKENIZERS_PARALLELISM", False, id="not-a-token"),
        pytest.param("HOME", False, id="home"),
        pytest.param("MERCURY_STALL_SOFT_MS", False, id="mercury-setting"),
    ],
)
def test_secret_names(name: str, secret: bool) -> None:
    assert is_secret_name(name) is secret


@pytest.mark.parametrize(
    ("environ", "expected"),
    [
        pytest.param({"A_API_KEY": "sk-abcdefgh\n"}, ("sk-abcdefgh",), id="trailing-newline"),
        pytest.param({"DB_PASSWORD": "  hunter22  "}, ("hunter22",), id="surrounding-spaces"),
        pytest.param({"X_TOKEN": "yes"}, (), id="too-short"),
        pytest.param({"PATH": "/usr/bin:/bin"}, (), id="not-secret"),
    ],
)
def test_env_secrets_are_stripped(environ: dict[str, str], expected: tuple[str, ...]) -> None:
    assert env_secrets(environ) == expected


@pytest.mark.parametrize(
    ("text", "secrets", "expected"),
    [
        pytest.param("key=abc123xyz!", ("abc123xyz!\n",), "key=***", id="secret-with-newline"),
        pytest.param("AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI", (), "AWS_SECRET_ACCESS_KEY=***",
                     id="dotenv-secret"),
        pytest.param('DB_PASSWORD: "hunter22"', (), 'DB_PASSWORD: "***"', id="yaml-password"),
        pytest.param('{"MY_TOKEN": "t0k3nvalue"}', (), '{"MY_TOKEN": "***"}', id="json-token"),
        pytest.param("export GH_TOKEN=ghp_x", (), "export GH_TOKEN=***", id="export-line"),
        pytest.param("the token was fine", (), "the token was fine", id="prose-untouched"),
        pytest.param("AKIAABCDEFGHIJKLMNOP", (), "***", id="aws-access-key-id"),
        pytest.param("-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1r\n-----END OPENSSH "
                     "PRIVATE KEY-----\nnext", (),
                     "-----BEGIN OPENSSH PRIVATE KEY-----\n***\n-----END PRIVATE KEY-----\nnext",
                     id="pem-private-key"),
        pytest.param("-----BEGIN RSA PRIVATE KEY-----\nMIIEow", (),
                     "-----BEGIN RSA PRIVATE KEY-----\n***\n-----END PRIVATE KEY-----",
                     id="pem-cut-short"),
        pytest.param("-----BEGIN PUBLIC KEY-----\nMIIB", (), "-----BEGIN PUBLIC KEY-----\nMIIB",
                     id="public-key-untouched"),
        pytest.param("machine x.com login me password hunter22", (),
                     "machine x.com login me password ***", id="netrc-one-line"),
        pytest.param("machine x.com\n  login me\n  password hunter22\n", (),
                     "machine x.com\n  login me\n  password ***\n", id="netrc-lines"),
        pytest.param("The password field is required.", (), "The password field is required.",
                     id="password-in-prose"),
    ],
)
def test_redact(text: str, secrets: tuple[str, ...], expected: str) -> None:
    assert redact(text, secrets) == expected


def test_redact_data_masks_keys_as_well_as_values() -> None:
    data = {"files": {"sk-secretvalue123.txt": {"size": 3, "text": "sk-secretvalue123"}}}
    clean = redact_data(data, ("sk-secretvalue123",))
    assert "sk-secretvalue123" not in repr(clean)
    assert clean == {"files": {"***.txt": {"size": 3, "text": "***"}}}


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        pytest.param("plain.txt", "plain.txt", id="utf8"),
        pytest.param("bad\udcffname.txt", "bad\\xffname.txt", id="surrogate-escape"),
        pytest.param("é.txt", "é.txt", id="non-ascii-utf8"),
    ],
)
def test_displayable(text: str, expected: str) -> None:
    assert displayable(text) == expected
    displayable(text).encode("utf-8")


SHAPES = [
    "sk-abcdefgh12345678", "key sk-proj_abc-DEF-123456789 here", "hf_abcdefghijklmnopqrstu",
    "ghp_0123456789abcdefABCDEF", "github_pat_0123456789abcdefABCDEF", "xai-0123456789abcdefghij",
    "AIzaSyA0123456789abcdefghijklmno", "AKIAABCDEFGHIJKLMNOP", "Authorization: Bearer abc.def-123",
    "BEARER abcdefgh12345", 'api_key="abcdef123456"', "X-API-KEY: abcdefgh",
    "access-token=zzzzzzzz",
    "MY_SECRET_THING=hunter22", '"DB_PASSWORD": "pa55word"', "authorization: bearer abcdefghij",
    "plain words, nothing: to hide = here", "the quick brown fox " * 20, "",
    "-----BEGIN EC PRIVATE KEY-----\nMHcCAQEE\n-----END EC PRIVATE KEY-----",
    "login me password hunter22", "Password\tx",
]


@pytest.mark.parametrize("text", SHAPES)
def test_skipping_texts_without_a_shapes_literal_changes_nothing(text: str) -> None:
    """A token shape is searched only in texts holding one of its literals: the result is
    what searching every shape in every text gives."""
    from mercury_nb.contract import redaction

    full = text.replace("hunter22", redaction.MASK) if "hunter22" in text else text
    for pattern, replacement, _ in redaction._TOKEN_PATTERNS:
        full = pattern.sub(replacement, full)
    assert redact(text, ("hunter22",)) == full
    assert redact(text.lower(), ()) == _searched_everywhere(text.lower())


def _searched_everywhere(text: str) -> str:
    from mercury_nb.contract import redaction

    for pattern, replacement, _ in redaction._TOKEN_PATTERNS:
        text = pattern.sub(replacement, text)
    return text
