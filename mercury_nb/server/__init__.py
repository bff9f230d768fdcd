"""The JupyterLab side panel's server extension: REST + WebSocket under /mercury/api/.

Loaded automatically by jupyter_server through the ``jupyter_server_config.d`` JSON that
ships in the wheel. Importing this module is light: handlers load when the server starts it.
"""

from __future__ import annotations

from typing import Any


def _jupyter_server_extension_points() -> list[dict[str, Any]]:
    from mercury_nb.server.app import MercuryServerApp

    return [{"module": "mercury_nb.server", "app": MercuryServerApp}]


def _jupyter_labextension_paths() -> list[dict[str, str]]:
    return [{"src": "../labextension", "dest": "mercury-nb"}]
