"""A real JupyterLab (temp root, temp MERCURY_HOME, token, loopback, the app exposed to the
page) for the cell-widget browser tests (test_widget_states.py); the browser is conftest.py's.

Skipped when Playwright, JupyterLab or /usr/bin/chromium is missing. Never downloads a browser.
"""

from __future__ import annotations

import contextlib
import json
import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

CHROMIUM = "/usr/bin/chromium"
LAB_START_S = 90.0


@dataclass(frozen=True)
class WidgetLab:
    """A running JupyterLab: its URL, token, notebook root and the kernels' MERCURY_HOME."""

    url: str
    token: str
    root: Path
    home: Path
    log: Path

    def notebook_url(self, name: str) -> str:
        return f"{self.url}/lab/tree/{name}?token={self.token}&reset"

    def write_notebook(self, name: str, cells: list[str]) -> Path:
        nb = {
            "nbformat": 4, "nbformat_minor": 5,
            "metadata": {"kernelspec": {"display_name": "Python 3 (ipykernel)",
                                        "language": "python", "name": "python3"}},
            "cells": [{"cell_type": "code", "id": f"c{i}", "metadata": {}, "outputs": [],
                       "execution_count": None, "source": source}
                      for i, source in enumerate(cells)],
        }
        path = self.root / name
        path.write_text(json.dumps(nb, indent=1), encoding="utf-8")
        return path


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _require_tools() -> None:
    pytest.importorskip("playwright.sync_api", reason="playwright is not installed")
    pytest.importorskip("jupyterlab", reason="jupyterlab is not installed")
    if not Path(CHROMIUM).exists():
        pytest.skip(f"{CHROMIUM} is not installed")


def _quiet_lab_settings(settings: Path) -> None:
    """No news or update toasts over the cells being photographed."""
    folder = settings / "@jupyterlab" / "apputils-extension"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "notification.jupyterlab-settings").write_text(
        json.dumps({"fetchNews": "false", "checkForUpdates": False}), encoding="utf-8")


@pytest.fixture(scope="module")
def widget_lab(tmp_path_factory: pytest.TempPathFactory) -> Iterator[WidgetLab]:
    _require_tools()
    base = tmp_path_factory.mktemp("widget-lab")
    root, home, settings = base / "root", base / "home", base / "settings"
    for folder in (root, home, settings):
        folder.mkdir()
    _quiet_lab_settings(settings)
    port, token = _free_port(), secrets.token_hex(16)
    env = {k: v for k, v in os.environ.items() if not k.startswith("MERCURY_")}
    env.update(MERCURY_HOME=str(home), JUPYTERLAB_SETTINGS_DIR=str(settings),
               MERCURY_PERMISSIONS="auto",  # the scripted cells run their commands unasked
               JUPYTERLAB_WORKSPACES_DIR=str(base / "workspaces"),
               JUPYTER_RUNTIME_DIR=str(base / "runtime"))
    log = base / "lab.log"
    command = [
        sys.executable, "-m", "jupyterlab", "--allow-root", "--no-browser",
        "--ip=127.0.0.1", f"--port={port}", f"--IdentityProvider.token={token}",
        f"--ServerApp.root_dir={root}", "--LabApp.expose_app_in_browser=True",
        "--ServerApp.open_browser=False",
    ]
    with log.open("wb") as out:
        process = subprocess.Popen(command, env=env, stdout=out, stderr=subprocess.STDOUT,
                                   start_new_session=True)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + LAB_START_S
        while True:
            try:
                with urllib.request.urlopen(f"{url}/api/status?token={token}", timeout=2):
                    break
            except OSError:
                if process.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError("jupyter lab did not start:\n"
                                       + log.read_text(errors="replace")[-3000:]) from None
                time.sleep(0.25)
        yield WidgetLab(url=url, token=token, root=root, home=home, log=log)
    finally:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(process.pid, signal.SIGTERM)
        try:
            process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(process.pid, signal.SIGKILL)
            process.wait(timeout=5)
        shutil.rmtree(root, ignore_errors=True)
