"""Open a report page in headless Chromium (Debian's ``chromium``, driven by Playwright for
Python through ``executable_path``: no browser download) and record what a user would meet:
console errors, requests leaving the page, the page's width against the window's.

Without Playwright or Chromium the tests that use :func:`browser` skip, saying which is missing.
"""

from __future__ import annotations

import shutil
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

DESKTOP = {"width": 1280, "height": 800}
PHONE = {"width": 390, "height": 844}


def chromium_path() -> str | None:
    for name in ("chromium", "chromium-browser"):
        found = shutil.which(name)
        if found:
            return found
    return None


@dataclass
class Visit:
    page: Any
    load_seconds: float
    errors: list[str] = field(default_factory=list)
    requests: list[str] = field(default_factory=list)  # every URL but the page's own

    def overflow(self) -> int:
        """How many pixels the document is wider than the window (0: nothing overflows)."""
        width: int = self.page.evaluate(
            "Math.max(document.documentElement.scrollWidth, document.body.scrollWidth)"
        )
        return max(0, width - int(self.page.viewport_size["width"]))


class Browser:
    def __init__(self, chromium: Any) -> None:
        self._chromium = chromium

    def visit(self, path: Path, viewport: dict[str, int] = DESKTOP) -> Visit:
        page = self._chromium.new_page(viewport=viewport)
        url = path.resolve().as_uri()
        visit = Visit(page, 0.0)
        page.on("console", lambda m: visit.errors.append(m.text) if m.type == "error" else None)
        page.on("pageerror", lambda e: visit.errors.append(str(e)))
        page.on("request", lambda r: visit.requests.append(r.url) if r.url != url else None)
        start = time.perf_counter()
        page.goto(url, wait_until="load")
        visit.load_seconds = time.perf_counter() - start
        return visit

    def screenshot(self, visit: Visit, path: Path, viewport: dict[str, int]) -> int:
        """Resize to ``viewport``, save a screenshot of the window, return the overflow."""
        visit.page.set_viewport_size(viewport)
        visit.page.screenshot(path=str(path))
        return visit.overflow()


@pytest.fixture(scope="session")
def browser() -> Iterator[Browser]:
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        pytest.skip("Playwright for Python is not installed (pip install -e '.[test]')")
    executable = chromium_path()
    if executable is None:
        pytest.skip("no Chromium on this machine (apt-get install chromium; .ci/run does)")
    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=executable, args=["--no-sandbox"])
        try:
            yield Browser(chromium)
        finally:
            chromium.close()
