"""The report tests' one headless Chromium (``browser.py``), shared by every page test: a
fixture imported into each module would start a second Playwright, which refuses."""

from tests.snapshot.simulation.report.browser import browser

__all__ = ["browser"]
