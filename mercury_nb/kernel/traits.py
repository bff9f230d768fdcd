"""The extension's traitlets settings (``c.Mercury.*``): the lowest layer above the defaults."""

from __future__ import annotations

from typing import Any

from traitlets import Bool, Dict, Float, Int, List, Unicode
from traitlets.config import Configurable


class Mercury(Configurable):
    """Extension settings from IPython config, e.g. ``c.Mercury.model = "openai/gpt-4o"``
    or ``%config Mercury.max_steps = 40``. Environment variables and magic flags win."""

    model = Unicode(None, allow_none=True, help="First model of the chain.").tag(config=True)
    fallbacks = List(Unicode(), help="Models tried in order after the first.").tag(config=True)
    api_base = Unicode(None, allow_none=True, help="OpenAI-compatible base URL.").tag(config=True)
    max_steps = Int(None, allow_none=True, help="Model steps per step budget.").tag(config=True)
    workdir = Unicode(None, allow_none=True, help="Workspace root.").tag(config=True)
    pass_env = List(Unicode(), help="Secret-named variables handed to commands all the same."
                    ).tag(config=True)
    sandbox = Unicode(None, allow_none=True,
                      help="'workspace-write': every command under bubblewrap.").tag(config=True)
    sandbox_network = Bool(None, allow_none=True,
                           help="Sandboxed commands may reach the network.").tag(config=True)
    max_cost_usd = Float(None, allow_none=True,
                         help="Estimated USD a task may spend before it pauses.").tag(config=True)
    max_tokens = Int(None, allow_none=True,
                     help="Tokens a task may use before it pauses.").tag(config=True)
    permissions = Unicode(None, allow_none=True,
                          help="read-only, ask, edits (default) or auto.").tag(config=True)
    allow = List(Unicode(), help="Allow rules: commands run unasked.").tag(config=True)
    overrides = Dict(help="Any other MercuryConfig field, by name.").tag(config=True)

    def base_values(self) -> dict[str, Any]:
        """The values set here, as the ``base`` layer of ``MercuryConfig.load``."""
        values: dict[str, Any] = dict(self.overrides)
        for name in ("model", "api_base", "max_steps", "workdir", "sandbox", "sandbox_network",
                     "max_cost_usd", "max_tokens", "permissions"):
            value = getattr(self, name)
            if value is not None and value != "":
                values[name] = value
        if self.fallbacks:
            values["fallbacks"] = tuple(self.fallbacks)
        if self.allow:
            values["allow"] = tuple(self.allow)
        if self.pass_env:
            values["pass_env"] = tuple(self.pass_env)
        return values
