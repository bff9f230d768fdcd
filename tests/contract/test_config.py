"""The one config model: env overrides, precedence, derived values, documented fields."""

import re
from pathlib import Path

import pytest
from pydantic import ValidationError

from mercury_nb.contract.config import MercuryConfig
from mercury_nb.contract.config_limits import MAX_STEPS_RANGE

README = Path(__file__).resolve().parents[2] / "README.md"


@pytest.mark.parametrize(
    ("env", "field", "expected"),
    [
        pytest.param({"MERCURY_MODEL": "openai/x"}, "model", "openai/x", id="model"),
        pytest.param(
            {"MERCURY_FALLBACKS": "a, b,,c"}, "fallbacks", ("a", "b", "c"), id="fallbacks"
        ),
        pytest.param(
            {"MERCURY_API_BASE": "http://127.0.0.1:9/v1"},
            "api_base",
            "http://127.0.0.1:9/v1",
            id="api-base",
        ),
        pytest.param({"MERCURY_MAX_STEPS": "7"}, "max_steps", 7, id="max-steps"),
        pytest.param({"MERCURY_MAX_COST_USD": "0.5"}, "max_cost_usd", 0.5, id="max-cost"),
        pytest.param({"MERCURY_MAX_TOKENS": "20000"}, "max_tokens", 20_000, id="max-tokens"),
        pytest.param({}, "max_cost_usd", None, id="no-cost-budget-by-default"),
        pytest.param({"MERCURY_WORKDIR": "/tmp"}, "workdir", Path("/tmp"), id="workdir"),
        pytest.param(
            {"MERCURY_STALL_SOFT_MS": "1000"},
            "effective_stall_hard_ms",
            301_000,
            id="only-soft-stall-gives-hard-plus-5-min",
        ),
        pytest.param({}, "effective_stall_hard_ms", 480_000, id="default-hard-stall-8-min"),
        pytest.param({"MERCURY_MAX_STEPS": ""}, "max_steps", 75, id="empty-env-is-ignored"),
    ],
)
def test_env_overrides(env: dict[str, str], field: str, expected: object) -> None:
    assert getattr(MercuryConfig.load(env), field) == expected


def test_api_key_is_secret() -> None:
    config = MercuryConfig.load({"MERCURY_API_KEY": "sk-very-secret"})
    assert config.api_key is not None
    assert "sk-very-secret" not in repr(config)
    assert "sk-very-secret" not in config.model_dump_json()


def test_precedence_defaults_traitlets_env_flags() -> None:
    env = {"MERCURY_MAX_STEPS": "5", "MERCURY_MODEL": "env-model"}
    config = MercuryConfig.load(
        env, base={"max_steps": 3, "model": "trait-model", "retry_attempts": 1}, model="flag-model"
    )
    assert (config.model, config.max_steps, config.retry_attempts) == ("flag-model", 5, 1)


def test_model_chain_dedupes_in_order() -> None:
    config = MercuryConfig(model="a", fallbacks=("b", "a", "c"))
    assert config.model_chain == ("a", "b", "c")


def test_bad_values_are_refused() -> None:
    with pytest.raises(ValidationError):
        MercuryConfig.load({"MERCURY_MAX_STEPS": "0"})


@pytest.mark.parametrize(("steps", "ok"), [
    pytest.param(MAX_STEPS_RANGE[0] - 1, False, id="below"),
    pytest.param(MAX_STEPS_RANGE[0], True, id="lowest"),
    pytest.param(MAX_STEPS_RANGE[1], True, id="highest"),
    pytest.param(MAX_STEPS_RANGE[1] + 1, False, id="above"),
])
def test_the_step_budget_has_one_range(steps: int, ok: bool) -> None:
    assert MAX_STEPS_RANGE == (1, 1000)
    if ok:
        assert MercuryConfig(max_steps=steps).max_steps == steps
    else:
        with pytest.raises(ValidationError):
            MercuryConfig.load({"MERCURY_MAX_STEPS": str(steps)})


def test_the_panels_step_field_checks_the_same_upper_bound() -> None:
    source = (README.parent / "labextension" / "src" / "prompt.tsx").read_text(encoding="utf-8")
    [limit] = re.findall(r"export const MAX_STEPS_LIMIT = (\d+);", source)
    assert int(limit) == MAX_STEPS_RANGE[1]


def _field_docstrings() -> dict[str, str]:
    """Each field's docstring (the string right after its annotated assignment)."""
    import ast
    import inspect

    docs: dict[str, str] = {}
    # the model and the classes it takes fields from (each field is documented where it is)
    for model in MercuryConfig.__mro__:
        if not model.__module__.startswith("mercury_nb.contract"):
            continue
        (cls,) = ast.parse(inspect.getsource(model)).body
        assert isinstance(cls, ast.ClassDef)
        for node, following in zip(cls.body, cls.body[1:], strict=False):
            if (isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name)
                    and isinstance(following, ast.Expr)
                    and isinstance(following.value, ast.Constant)
                    and isinstance(following.value.value, str)):
                docs[node.target.id] = following.value.value
    return docs


FIELD_DOCS = _field_docstrings()


@pytest.mark.parametrize("name", list(MercuryConfig.model_fields))
def test_every_field_is_documented_in_code_and_readme(name: str) -> None:
    assert FIELD_DOCS.get(name, "").strip(), f"{name} has no docstring"
    assert f"`MERCURY_{name.upper()}`" in README.read_text(encoding="utf-8")


@pytest.mark.parametrize(
    "environ",
    [
        pytest.param({"MERCURY_REQUEST_TIMEOUT_S": "inf"}, id="inf-request-timeout"),
        pytest.param({"MERCURY_COMMAND_TIMEOUT_S": "nan"}, id="nan-command-timeout"),
        pytest.param({"MERCURY_MAX_COMMAND_TIMEOUT_S": "Infinity"}, id="inf-max-command"),
        pytest.param({"MERCURY_NOTEBOOK_TIMEOUT_S": "-inf"}, id="minus-inf-notebook"),
        pytest.param({"MERCURY_HOME": ""}, id="empty-home"),
        pytest.param({"MERCURY_HOME": "  "}, id="blank-home"),
        pytest.param({"MERCURY_WORKDIR": ""}, id="empty-workdir"),
        pytest.param({"MERCURY_WORKDIR": "/no/such/folder/for/mercury"}, id="missing-workdir"),
    ],
)
def test_unusable_settings_are_errors(environ: dict[str, str]) -> None:
    with pytest.raises(ValidationError):
        MercuryConfig.load(environ)


def test_an_existing_workdir_from_the_environment_is_taken(tmp_path: Path) -> None:
    assert MercuryConfig.load({"MERCURY_WORKDIR": str(tmp_path)}).workdir == tmp_path
