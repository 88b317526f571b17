"""The examples of docs/sql.md and what each returns on the quick start's run, as the doc shows
it: one place for the test that checks the doc and for the command that rewrites its results.

    python -m tests.migrations.sql_doc DB   # DB: a fresh `drasnap simulate scale-up` database

Columns whose values change from run to run (times, durations) are shown as ``…``.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

from drasnap.store import query
from drasnap.tools.output import render_table

DOCS = Path(__file__).resolve().parents[2] / "docs" / "sql.md"
VOLATILE = frozenset({"started", "opened_at", "seconds"})
_EXAMPLE = re.compile(r"<!-- (example|example-postgresql): (\S+) -->\s*```sql\n(.*?)```", re.S)
_RESULT = re.compile(r"<!-- result: (\S+) -->\n```text\n(.*?)```\n", re.S)


def examples(dialect: str = "") -> dict[str, str]:
    """The example queries, by name (the PostgreSQL variants where given and asked for)."""
    found: dict[str, str] = {}
    for kind, name, sql in _EXAMPLE.findall(DOCS.read_text()):
        if (kind == "example" and name not in found) or (
            kind == "example-postgresql" and dialect == "postgresql"
        ):
            found[name] = sql
    return found


def documented_results() -> dict[str, str]:
    """What the doc says each example returns."""
    return dict(_RESULT.findall(DOCS.read_text()))


def result_of(db: Path | str, sql: str) -> str:
    """The rows as ``drasnap query`` prints them, volatile columns as ``…``."""
    result = query(db, sql)
    volatile = [i for i, column in enumerate(result.columns) if column in VOLATILE]
    rows = [
        tuple("…" if i in volatile and value is not None else value for i, value in enumerate(row))
        for row in result.rows
    ]
    return render_table(result.columns, rows) + "\n"


def rewrite(db: Path | str) -> None:
    """Put each example's result after it in the doc (replacing the one there)."""
    text = re.sub("\n?" + _RESULT.pattern, "", DOCS.read_text(), flags=re.S)
    out, end = [], 0
    for match in re.finditer(r"<!-- example: (\S+) -->\s*```sql\n(.*?)```\n", text, re.S):
        out.append(text[end : match.end()])
        out.append(
            f"\n<!-- result: {match.group(1)} -->\n```text\n{result_of(db, match.group(2))}```\n"
        )
        end = match.end()
    out.append(text[end:])
    DOCS.write_text(re.sub(r"\n{3,}", "\n\n", "".join(out)))


if __name__ == "__main__":
    rewrite(sys.argv[1])
