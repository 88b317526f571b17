"""Where the tests find the repository and their fixtures (tests/fixtures/: origins in its
README)."""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = ROOT / "tests" / "fixtures"
