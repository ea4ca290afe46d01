"""Headless Chromium for the report.html tests: Playwright (the ``browser`` extra) driving the
Debian ``chromium`` package. Every test here skips, saying why, when either is missing."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

#: Where Debian's package puts it; PREFIXBENCH_CHROMIUM overrides.
CHROMIUM = os.environ.get("PREFIXBENCH_CHROMIUM") or shutil.which("chromium") or "/usr/bin/chromium"
#: Offline and quiet: no background fetches, no updater, no sync, no first-run pages.
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]


@pytest.fixture(scope="package")
def browser():
    """One Chromium for the browser tests, closed when they end: Playwright's sync API keeps an
    event loop running in this thread while open, and a later test's asyncio.run (the proxy's)
    would fail under it."""
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        pytest.skip("playwright is not installed (pip install -e '.[browser]')")
    if not Path(CHROMIUM).is_file():
        pytest.skip(f"no Chromium at {CHROMIUM} (apt-get install -y chromium, or set PREFIXBENCH_CHROMIUM)")
    with sync_playwright() as pw:
        try:
            browser = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        except Exception as exc:  # a Chromium that cannot start here (missing libraries, ...)
            pytest.skip(f"Chromium at {CHROMIUM} does not start: {str(exc).splitlines()[0]}")
        yield browser
        browser.close()


class Loaded:
    """A page opened from file:// with every console message, page error and request kept."""

    def __init__(self, page):
        self.page = page
        self.console: list[str] = []
        self.requests: list[str] = []


@pytest.fixture
def open_report(browser):
    """Open a report.html offline; returns a :class:`Loaded` to assert on."""
    contexts = []

    def _open(path: Path) -> Loaded:
        context = browser.new_context(offline=True, viewport={"width": 1300, "height": 900})
        contexts.append(context)
        page = context.new_page()
        loaded = Loaded(page)
        page.on("console", lambda m: loaded.console.append(f"{m.type}: {m.text}") if m.type in ("error", "warning") else None)
        page.on("pageerror", lambda e: loaded.console.append(f"pageerror: {e}"))
        page.on("request", lambda r: loaded.requests.append(r.url))
        page.goto(path.resolve().as_uri())
        page.wait_for_load_state("load")
        return loaded

    yield _open
    for context in contexts:
        context.close()
