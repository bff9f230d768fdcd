"""runs.plan: every source of settings into one config, with precedence decided once."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from mercury_nb.runs import plan
from mercury_nb.runs.settings import flag_values

CHECKPOINT = {"config": {"model": "openai/saved", "fallbacks": ["openai/saved-2"],
                         "max_steps": 7, "workdir": "/tmp", "api_key": "sk-stored-never"}}


@pytest.mark.parametrize(
    ("flags", "traitlets", "env", "checkpoint", "expected"),
    [
        pytest.param({}, {}, {}, None, {"max_steps": 75}, id="defaults"),
        pytest.param({}, {"max_steps": 5}, {}, None, {"max_steps": 5}, id="traitlets"),
        pytest.param({}, {"max_steps": 5}, {"MERCURY_MAX_STEPS": "6"}, None,
                     {"max_steps": 6}, id="env-over-traitlets"),
        pytest.param({"max_steps": 9}, {"max_steps": 5}, {"MERCURY_MAX_STEPS": "6"}, None,
                     {"max_steps": 9}, id="flags-over-everything"),
        pytest.param({"max_steps": None, "chat": False, "yes": False}, {},
                     {"MERCURY_MAX_STEPS": "6"}, None,
                     {"max_steps": 6, "mode": "execute", "auto_yes": False},
                     id="unset-flags-override-nothing"),
        pytest.param({"chat": True, "yes": True, "fallback": ["openai/b"]}, {}, {}, None,
                     {"mode": "chat", "auto_yes": True, "fallbacks": ("openai/b",)},
                     id="front-end-flag-names"),
        pytest.param({}, {}, {"MERCURY_MAX_STEPS": "6"}, CHECKPOINT,
                     {"max_steps": 7, "model": "openai/saved", "fallbacks": ("openai/saved-2",)},
                     id="checkpoint-stands-in-for-env"),
        pytest.param({"max_steps": 3}, {}, {}, CHECKPOINT, {"max_steps": 3},
                     id="flags-over-checkpoint"),
        pytest.param({"model": "openai/new"}, {}, {}, CHECKPOINT,
                     {"model": "openai/new", "fallbacks": ()}, id="new-model-drops-fallbacks"),
    ],
)
def test_precedence(flags: dict[str, Any], traitlets: dict[str, Any], env: dict[str, str],
                    checkpoint: dict[str, Any] | None, expected: dict[str, Any]) -> None:
    config = plan(flags, traitlets=traitlets, env=env, checkpoint=checkpoint)
    assert {name: getattr(config, name) for name in expected} == expected


def test_a_resumed_task_takes_the_current_key_and_home_never_the_stored_ones() -> None:
    config = plan({}, env={"MERCURY_API_KEY": "sk-current-1234", "MERCURY_HOME": "/tmp/h"},
                  checkpoint=CHECKPOINT)
    assert config.api_key is not None
    assert config.api_key.get_secret_value() == "sk-current-1234"
    assert config.home == Path("/tmp/h")


def test_front_end_only_flags_are_ignored_and_unknown_ones_refused() -> None:
    assert flag_values({"wait": True, "json": True, "workdir": "~"}) == {"workdir": Path.home()}
    with pytest.raises(ValueError, match="unknown setting 'modle'"):
        flag_values({"modle": "x"})
