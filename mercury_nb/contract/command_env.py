"""The environment a command gets: yours, without the secrets, decided once, as a pure function.

A variable is withheld from every command (``run_command``, the notebook check the gate
runs) when the redaction takes its name for a secret's (:func:`~mercury_nb.contract.
redaction.is_secret_name`: ``*_API_KEY``, ``*_KEY``, ``*_TOKEN``, ``*_SECRET*``,
``*_PASSWORD``, ``*_PASSWD`` and their bare forms), when it is one of the variables a
provider's key is read from (:data:`~mercury_nb.contract.setup.keys.KEY_VARIABLES`) or
mercury's own ``MERCURY_API_KEY``, when its value holds a key the configuration knows
(``c.Mercury.api_key`` under another name), or when the redaction would mask its value (a
key-shaped token such as ``ghp_…`` under any name). A name given to ``pass_env`` is handed on
whatever it is: the one deliberate way through. Everything else passes unchanged.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from mercury_nb.contract.redaction import MIN_SECRET_CHARS, is_secret_name, redact
from mercury_nb.contract.setup.keys import KEY_VARIABLES, MERCURY_KEY

PROVIDER_KEY_NAMES: frozenset[str] = frozenset(
    {MERCURY_KEY, *(name for names in KEY_VARIABLES.values() for name in names)}
)
"""Every variable a model's key is read from (all secret-named already; kept by name so a
provider variable can never slip through a change to the name pattern)."""


@dataclass(frozen=True)
class CommandEnvironment:
    """What a command starts with: ``env``, and the ``withheld`` names (sorted)."""

    env: dict[str, str]
    withheld: tuple[str, ...]


def withholds(name: str, value: str, *, pass_env: Iterable[str] = (),
              secrets: Iterable[str] = ()) -> bool:
    """Whether the variable ``name`` (holding ``value``) is kept from commands."""
    if name in set(pass_env):
        return False
    if is_secret_name(name) or name.upper() in PROVIDER_KEY_NAMES:
        return True
    if any(len(s) >= MIN_SECRET_CHARS and s in value for s in (k.strip() for k in secrets)):
        return True
    return redact(value) != value  # a key-shaped value (ghp_…, sk-…) under any name


def command_environment(environ: Mapping[str, str], *, pass_env: Iterable[str] = (),
                        secrets: Iterable[str] = ()) -> CommandEnvironment:
    """``environ`` without what :func:`withholds` keeps back; ``secrets``: the keys the
    configuration holds (a variable carrying one is withheld whatever its name)."""
    passed = frozenset(pass_env)
    known = tuple(secrets)
    env: dict[str, str] = {}
    withheld: list[str] = []
    for name, value in environ.items():
        if withholds(name, value, pass_env=passed, secrets=known):
            withheld.append(name)
        else:
            env[name] = value
    return CommandEnvironment(env, tuple(sorted(withheld)))
