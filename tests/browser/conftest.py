"""A real JupyterLab server and a real Chromium for the widget tests.

The server binds to 127.0.0.1 on a free port, without a token, and shuts itself
down after a few idle minutes (and after half an hour in any case) even if this
process dies; the fixture stops it (and its kernels) at the end. Chromium is Debian's (`make test` installs it with
apt), driven by playwright, which downloads nothing. Without either, the tests skip
and say why.
"""
from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
START_TIMEOUT = 90   # seconds for JupyterLab to answer
IDLE_SHUTDOWN = 300  # the server stops itself after this long without activity
LIFETIME = 1800      # and after this long in any case: a kernel left "starting" by an interrupted run is
#                      never culled, and keeps a server counting as active (seen: 60 minutes after a -x stop)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class LabServer:
    def __init__(self, url: str, root: Path, log: Path):
        self.url, self.root, self.log = url, root, log

    def copy_notebook(self, path: Path) -> str:
        """A committed notebook, copied as it is (the server has never seen it: untrusted, as after a clone)."""
        (self.root / path.name).write_bytes(path.read_bytes())
        return path.name

    def write_notebook(self, name: str, cells: list[str]) -> str:
        """A notebook of code cells in the server's folder; returns its path for /lab/tree/."""
        nb = {"cells": [{"cell_type": "code", "execution_count": None, "metadata": {}, "outputs": [],
                         "source": src} for src in cells],
              "metadata": {"kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"}},
              "nbformat": 4, "nbformat_minor": 5}
        (self.root / name).write_text(json.dumps(nb))
        return name


@pytest.fixture(scope="module")
def lab_server(tmp_path_factory):
    pytest.importorskip("jupyterlab", reason="JupyterLab is not installed (pip install 'tinygrad-lab[lab]')")
    root = tmp_path_factory.mktemp("lab")
    log = root.parent / "jupyterlab.log"
    port = _free_port()
    cmd = ["timeout", "--kill-after=30", str(LIFETIME),  # coreutils: SIGTERM (the server stops its kernels)
           sys.executable, "-m", "jupyterlab", "--no-browser", f"--ServerApp.port={port}",
           "--ServerApp.ip=127.0.0.1", "--IdentityProvider.token=", "--ServerApp.password=",
           "--ServerApp.disable_check_xsrf=True", f"--ServerApp.root_dir={root}",
           f"--ServerApp.shutdown_no_activity_timeout={IDLE_SHUTDOWN}",
           "--MappingKernelManager.cull_idle_timeout=120", "--MappingKernelManager.cull_interval=30",
           "--LabApp.news_url=", "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate"]
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        cmd.append("--allow-root")
    # a private settings folder (the user's own stays untouched): no news pop-up over the widgets,
    # and notebooks start their kernel without asking
    settings = root.parent / "lab-settings"
    # every cell rendered (no windowing), so tests can find any cell of a long lesson
    for name, value in {"apputils-extension/notification": {"fetchNews": "false", "checkForUpdates": False},
                        "notebook-extension/tracker": {"autoStartDefaultKernel": True, "windowingMode": "none"}}.items():
        path = settings / "@jupyterlab" / f"{name}.jupyterlab-settings"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(value))
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2]),
           "JUPYTERLAB_SETTINGS_DIR": str(settings), "JUPYTERLAB_WORKSPACES_DIR": str(root.parent / "workspaces")}
    with open(log, "wb") as out:
        proc = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT, cwd=root, env=env, start_new_session=True)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + START_TIMEOUT
        while True:
            try:
                with urllib.request.urlopen(f"{url}/api/status", timeout=2) as r:
                    if r.status == 200:
                        break
            except (urllib.error.URLError, ConnectionError, TimeoutError):
                pass
            if proc.poll() is not None or time.monotonic() > deadline:
                pytest.fail(f"JupyterLab did not start in {START_TIMEOUT} s:\n{log.read_text()[-3000:]}")
            time.sleep(0.5)
        yield LabServer(url, root, log)
    finally:
        os.killpg(proc.pid, signal.SIGTERM)  # the server and its kernels
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(timeout=15)


@pytest.fixture(scope="module")
def browser():
    if CHROMIUM is None:
        pytest.skip("Chromium is not installed (make test installs Debian's `chromium` with apt)")
    sync_api = pytest.importorskip("playwright.sync_api", reason="playwright is not installed")
    with sync_api.sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=["--no-sandbox", "--disable-gpu"])
        try:
            yield b
        finally:
            b.close()


@pytest.fixture
def page(browser):
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    pg = context.new_page()
    pg.set_default_timeout(60_000)
    errors: list[str] = []
    pg.on("pageerror", lambda e: errors.append(str(e)))
    pg.console_errors = errors
    try:
        yield pg
    finally:
        context.close()
