"""Printing for people and programs: tables, JSON and times."""

from __future__ import annotations

import datetime as dt
import json as jsonlib
from collections.abc import Sequence
from typing import Any

import click


def echo_json(data: Any) -> None:
    click.echo(jsonlib.dumps(data, indent=2, default=_jsonable, ensure_ascii=False))


def _jsonable(value: Any) -> Any:
    if isinstance(value, bytes):
        return value.hex()
    return str(value)


def iso(ts: float | None) -> str:
    """Seconds since the epoch as UTC ISO 8601 with milliseconds ('' for None)."""
    if ts is None:
        return ""
    return dt.datetime.fromtimestamp(ts, dt.UTC).isoformat(timespec="milliseconds")


def cell(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, bytes):
        return value.hex()
    if isinstance(value, list | tuple):
        return "\n".join(cell(v) for v in value)
    return str(value)


def render_table(headers: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    """Columns padded to their widest line, a rule under the header.

    A list or tuple in a cell is printed one item per line (a claim's eight devices stack up
    instead of widening the table past a terminal).
    """
    cells = [[cell(v).split("\n") for v in row] for row in rows]
    widths = [len(h) for h in headers]
    for row in cells:
        for i, lines in enumerate(row):
            widths[i] = max(widths[i], *(len(line) for line in lines))
    out = ["  ".join(h.ljust(w) for h, w in zip(headers, widths, strict=True)).rstrip()]
    out.append("  ".join("-" * w for w in widths))
    for row in cells:
        for n in range(max((len(lines) for lines in row), default=1)):
            parts = [(lines[n] if n < len(lines) else "") for lines in row]
            out.append("  ".join(p.ljust(w) for p, w in zip(parts, widths, strict=True)).rstrip())
    return "\n".join(out)
