"""The jupyter_server ExtensionApp that registers the panel's handlers."""

from __future__ import annotations

from jupyter_server.extension.application import ExtensionApp

from mercury_nb.server.handlers import handlers


class MercuryServerApp(ExtensionApp):
    """Serves /mercury/api/ for the JupyterLab panel; tasks run on the server's loop."""

    name = "mercury_nb.server"
    load_other_extensions = True

    def initialize_handlers(self) -> None:
        self.handlers.extend(handlers())

    def initialize_settings(self) -> None:
        from mercury_nb.ledger.access import default_home, startup

        found = startup(default_home())
        for notice in found.notices:
            self.log.warning("mercury: %s", notice)
