"""The ledger's home: the config a task runs with and the front ends that open the ledger
before any config (server startup, %load_ext, watch, stop) name the same folder."""

from __future__ import annotations

from pathlib import Path

import pytest

from mercury_nb.contract.config import MercuryConfig
from mercury_nb.contract.home import default_home, home_of, live_home

HOME = str(Path.home())


@pytest.mark.parametrize(("env", "base", "expected"), [
    ({}, {}, f"{HOME}/.mercury"),
    ({"MERCURY_HOME": "/data/ledger"}, {}, "/data/ledger"),
    ({}, {"home": "/from/traitlets"}, "/from/traitlets"),
    ({"MERCURY_HOME": "/from/env"}, {"home": "/from/traitlets"}, "/from/env"),
    ({"MERCURY_HOME": "~/ledger"}, {}, f"{HOME}/ledger"),
    ({}, {"home": "~/traitlets-home"}, f"{HOME}/traitlets-home"),
])
def test_the_config_and_the_ledgers_front_ends_agree_on_the_home(
        env: dict[str, str], base: dict[str, str], expected: str) -> None:
    assert home_of(env, base) == Path(expected)
    assert MercuryConfig.load(env, base=base).home == Path(expected)


@pytest.mark.parametrize("blank", ["", "   "])
def test_a_blank_home_is_unset_where_no_config_can_refuse_it(blank: str) -> None:
    assert home_of({"MERCURY_HOME": blank}, {"home": blank}) == default_home()
    with pytest.raises(ValueError, match="MERCURY_HOME is set but empty"):
        MercuryConfig.load({"MERCURY_HOME": ""})


@pytest.mark.parametrize(("env", "expected"), [
    ({}, "/task/home"),
    ({"MERCURY_LAB_HOME": "/lab/home"}, "/lab/home"),
    ({"MERCURY_LAB_HOME": "  "}, "/task/home"),
    ({"MERCURY_LAB_HOME": "~/lab"}, f"{HOME}/lab"),
    ({"MERCURY_HOME": "/other", "MERCURY_LAB_HOME": "/lab/home"}, "/lab/home"),
])
def test_live_edits_go_through_the_labs_ledger_when_a_lab_started_this_process(
        env: dict[str, str], expected: str) -> None:
    assert live_home(env, Path("/task/home")) == Path(expected)
