"""Browser fixtures: a real ``jupyter lab`` on 127.0.0.1 with a token, and Debian's Chromium
driven by Python Playwright (never a downloaded browser).

``lab`` (session) yields a :class:`Lab` (base URL, token, root dir, MERCURY_HOME, env, and
the small task-list page size the server is configured with, so paging is cheap to test),
started as on a first launch: no provider key in its environment, no news toast;
``browser`` (module) is Chromium; ``page`` yields a Playwright page logged in to that lab.
The lab process loads ``tests/server/panel_scripts.py`` (and ``review_scripts.py``,
``live_scripts.py``) through a
``--config`` file, so the scripted models the tests name exist inside the server. Reusable by
any browser test in this folder; :func:`running_lab` and :func:`lab_page` start another lab
(``scripted=False``: a first launch's, without the test scripts, the ``first_lab`` fixture)
and open a page on it.
"""

from __future__ import annotations

import contextlib
import json
import os
import secrets
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu",
                 "--disable-background-networking", "--disable-component-update",
                 "--disable-sync", "--no-first-run"]
SCRIPTS_DIR = Path(__file__).resolve().parents[1] / "server"
if str(SCRIPTS_DIR) not in sys.path:  # the tests import panel_scripts too (its constants)
    sys.path.insert(0, str(SCRIPTS_DIR))
KEY_VARIABLES = ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "MERCURY_API_KEY",
                 "MERCURY_MODEL", "MERCURY_FALLBACKS", "MERCURY_API_BASE")
"""Left out of the lab's environment: its default model has no key, as on a first launch."""
LAB_START_TIMEOUT_S = 90.0
PAGE_SIZE = 5
"""``MercuryServerApp.page_size`` in the test lab: the panel's list pages by it."""


@dataclass(frozen=True)
class Lab:
    base_url: str
    token: str
    root: Path
    home: Path
    env: dict[str, str]
    page_size: int = PAGE_SIZE

    def api(self, path: str, body: Any = None) -> Any:
        """Call /mercury/api/<path> with the token (POST when ``body`` is given)."""
        data = None if body is None else json.dumps(body).encode()
        request = urllib.request.Request(
            f"{self.base_url}mercury/api/{path}", data=data,
            method="GET" if body is None else "POST",
            headers={"Authorization": f"token {self.token}"})
        with urllib.request.urlopen(request, timeout=10) as reply:
            return json.loads(reply.read())


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _wait_ready(url: str, process: subprocess.Popen[bytes], log: Path) -> None:
    deadline = time.monotonic() + LAB_START_TIMEOUT_S
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"jupyter lab exited: {log.read_text()[-3000:]}")
        try:
            with urllib.request.urlopen(url, timeout=2) as reply:
                if reply.status == 200:
                    return
        except (urllib.error.URLError, OSError):
            pass
        time.sleep(0.25)
    raise RuntimeError(f"jupyter lab did not start: {log.read_text()[-3000:]}")


def _quiet_lab_settings(settings: Path) -> None:
    """No "Jupyter news" question or update toast over the panel's toasts and screenshots."""
    folder = settings / "@jupyterlab" / "apputils-extension"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "notification.jupyterlab-settings").write_text(
        json.dumps({"fetchNews": "false", "checkForUpdates": False}), encoding="utf-8")


SCRIPTED_CONFIG = (
    "import sys\n"
    f"sys.path.insert(0, {str(SCRIPTS_DIR)!r})\n"
    "import panel_scripts\n"
    "panel_scripts.register_all()\n"
    "import review_scripts\n"
    "review_scripts.register_all()\n"
    "import undo_scripts\n"
    "undo_scripts.register_all()\n"
    "import live_scripts\n"
    "live_scripts.register_all()\n"
)
"""The test scripts every ``lab`` test names (``scripted/panel-...``, ``scripted/review-...``)."""


EXPECT_RTC = "MERCURY_EXPECT_RTC"
"""Set to 1 by ``test_live_collaboration.py``: every Lab must serve jupyter-collaboration."""


def _require_collaboration(base_url: str, token: str) -> None:
    """jupyter-collaboration's document-session route answers (anything but 404)."""
    import urllib.error
    import urllib.request

    try:
        urllib.request.urlopen(f"{base_url}api/collaboration/session/x.ipynb?token={token}",
                               timeout=10)
    except urllib.error.HTTPError as error:
        assert error.code != 404, "jupyter-collaboration is not serving in this Lab"


@contextlib.contextmanager
def running_lab(base: Path, *, scripted: bool = True, permissions: str = "auto"
                ) -> Iterator[Lab]:
    """A ``jupyter lab`` under ``base`` until the block ends; ``scripted=False``: without the
    test scripts, so its picker offers what a first launch offers (the default model, the
    shipped demos). ``permissions``: the tasks' mode (``auto`` by default: the scripted
    tasks of most tests run their commands unasked; the approval tests ask in ``edits``)."""
    root, home = base / "root", base / "mercury-home"
    root.mkdir()
    home.mkdir()
    config = base / "lab_config.py"
    config.write_text(
        (SCRIPTED_CONFIG if scripted else "")
        + f"c.MercuryServerApp.page_size = {PAGE_SIZE}\n"
        "c.LabApp.news_url = None\n"
        "c.LabApp.expose_app_in_browser = True\n"  # window.jupyterapp, for tests to reach models
        "c.LabApp.check_for_updates_class = 'jupyterlab.NeverCheckForUpdate'\n"
    )
    token, port = secrets.token_hex(16), _free_port()
    settings = base / "jupyter-config" / "lab" / "user-settings"
    _quiet_lab_settings(settings)
    env = {**{k: v for k, v in os.environ.items() if k not in KEY_VARIABLES},
           "MERCURY_HOME": str(home), "MERCURY_MAX_AUTO_CONTINUATIONS": "0",
           "MERCURY_PERMISSIONS": permissions,
           "JUPYTER_CONFIG_DIR": str(base / "jupyter-config"),
           "JUPYTERLAB_SETTINGS_DIR": str(settings),
           "JUPYTER_RUNTIME_DIR": str(base / "runtime")}
    log = base / "lab.log"
    with log.open("wb") as sink:
        process = subprocess.Popen(
            [sys.executable, "-m", "jupyterlab", "--allow-root", "--no-browser",
             "--ip=127.0.0.1", f"--port={port}", f"--IdentityProvider.token={token}",
             f"--ServerApp.root_dir={root}", f"--config={config}"],
            cwd=root, env=env, stdout=sink, stderr=subprocess.STDOUT)
    base_url = f"http://127.0.0.1:{port}/"
    try:
        _wait_ready(f"{base_url}api/status?token={token}", process, log)
        if os.environ.get(EXPECT_RTC) == "1":  # the run of test_live_collaboration.py
            _require_collaboration(base_url, token)
        yield Lab(base_url, token, root, home, env)
    finally:
        process.terminate()
        try:
            process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=5)


@pytest.fixture(scope="session")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Lab]:
    with running_lab(tmp_path_factory.mktemp("lab")) as started:
        yield started


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    """Debian's Chromium under Playwright; the test is skipped (saying why) without it.

    Module-scoped on purpose: Playwright's sync API keeps an asyncio loop running on the
    main thread while it is open, which would break every later asyncio test."""
    if not CHROMIUM.exists():
        pytest.skip(f"browser tests need Debian's chromium at {CHROMIUM} "
                    "(apt-get install chromium); .ci/run installs it")
    playwright_sync = pytest.importorskip("playwright.sync_api")
    with playwright_sync.sync_playwright() as driver:
        chromium = Relaunching(lambda: driver.chromium.launch(executable_path=str(CHROMIUM),
                                                              args=CHROMIUM_ARGS))
        try:
            yield chromium
        finally:
            chromium.close()


class Relaunching:
    """Chromium that is launched again when its process has died: a browser crash is not the
    product's (one CI run lost a whole module to one, at its first page load), and every
    later page of the module would fail with it. Each relaunch is printed."""

    def __init__(self, launch: Callable[[], Any]) -> None:
        self._launch = launch
        self._chromium = launch()

    def new_context(self, **options: Any) -> Any:
        if not self._chromium.is_connected():
            print("chromium's process had died: launched again", file=sys.stderr)
            self._chromium = self._launch()
        return self._chromium.new_context(**options)

    def is_connected(self) -> bool:
        return bool(self._chromium.is_connected())

    def close(self) -> None:
        if self._chromium.is_connected():
            self._chromium.close()


@pytest.fixture(scope="module")
def first_lab(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Lab]:
    """A lab as a first launch has it: no key, no test scripts (:func:`running_lab`); a
    module uses it as its ``lab`` by overriding that fixture with this one."""
    with running_lab(tmp_path_factory.mktemp("first-lab"), scripted=False) as started:
        yield started


@contextlib.contextmanager
def lab_page(browser: Any, lab: Lab) -> Iterator[Any]:
    """A fresh page on ``lab``'s JupyterLab, logged in with the token, the shell ready (a
    browser that died while the page loaded is launched again for one more try)."""
    for attempt in (1, 2):
        context = browser.new_context(viewport={"width": 1400, "height": 900})
        tab = context.new_page()
        tab.set_default_timeout(30_000)
        try:
            tab.goto(f"{lab.base_url}lab?token={lab.token}")
            tab.wait_for_selector("#jp-main-dock-panel", state="attached")
            break
        except Exception:
            if attempt == 2 or browser.is_connected():
                raise  # a page that did not load in a live browser is the product's
    try:
        yield tab
    finally:
        context.close()


@pytest.fixture
def page(browser: Any, lab: Lab) -> Iterator[Any]:
    """A fresh page on the session's JupyterLab (:func:`lab_page`)."""
    with lab_page(browser, lab) as tab:
        yield tab
