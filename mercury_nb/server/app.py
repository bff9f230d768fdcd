"""The jupyter_server ExtensionApp that registers the panel's handlers."""

from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor

from jupyter_server.extension.application import ExtensionApp
from traitlets import Int, TraitError, validate

from mercury_nb.server.handlers import PAGE_SIZE_SETTING, handlers
from mercury_nb.server.models import DEFAULT_PAGE, MAX_PAGE


class MercuryServerApp(ExtensionApp):
    """Serves /mercury/api/ for the JupyterLab panel; tasks run on the server's loop."""

    name = "mercury_nb.server"
    load_other_extensions = True

    page_size = Int(
        DEFAULT_PAGE, config=True,
        help=f"Tasks per page of GET /mercury/api/tasks without a limit, and so per page of "
             f"the panel's list (its 'Load more' adds this many); 1..{MAX_PAGE}.",
    )

    @validate("page_size")
    def _check_page_size(self, proposal: dict[str, int]) -> int:
        value = proposal["value"]
        if not 1 <= value <= MAX_PAGE:
            raise TraitError(f"MercuryServerApp.page_size must be 1..{MAX_PAGE}, not {value}")
        return value

    def initialize_handlers(self) -> None:
        from mercury_nb.server import (
            approval_handler,
            connect_handlers,
            live_handlers,
            undo_handler,
        )

        self.handlers.extend([*handlers(), *connect_handlers.connect_routes(),
                              *undo_handler.undo_routes(), *live_handlers.live_routes(),
                              *approval_handler.approval_routes()])

    def initialize_settings(self) -> None:
        from mercury_nb.contract.home import LAB_HOME_ENV, home_of
        from mercury_nb.ledger.access import startup

        self.settings[PAGE_SIZE_SETTING] = self.page_size
        from mercury_nb.server.connections import connections_of

        # the ledger's startup pass (recovery) before serving, as ever, but on a worker
        # thread: no ledger SQLite runs on the server's loop thread (issue 22)
        home = home_of()
        with ThreadPoolExecutor(1, thread_name_prefix="mercury-startup") as pool:
            found = pool.submit(startup, home).result()
        # kernels and terminals this server starts inherit it: a cell whose MERCURY_HOME
        # names another ledger still edits the notebooks open here live, through this one
        os.environ[LAB_HOME_ENV] = str(home)
        for notice in [*found.notices, *connections_of(self.settings).load()]:
            self.log.warning("mercury: %s", notice)
