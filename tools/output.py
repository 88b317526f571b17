"""Printing for people and programs: tables, JSON and times."""

from __future__ import annotations

import datetime as dt
import json as jsonlib
import os
import re
import shlex
import shutil
import sys
from collections.abc import Sequence
from typing import Any

import click

#: Tables that can grow wide (a claim's devices, layer labels) wrap to fit this many columns.
TABLE_WIDTH = 120


def program() -> list[str]:
    """The words that run ``drasnap`` as this process was run, for the commands it prints:
    ``drasnap`` when that is the one on PATH, else the path as given (``.venv/bin/drasnap``
    after the quick start), or the interpreter and ``-m drasnap.tools``."""
    called = sys.argv[0] if sys.argv else "drasnap"
    if os.path.basename(called) == "__main__.py":  # python -m drasnap.tools
        python = sys.executable
        if os.path.isabs(python) and python.startswith(os.getcwd() + os.sep):
            python = os.path.relpath(python)
        return [python, "-m", "drasnap.tools"]
    on_path = shutil.which(os.path.basename(called))
    if on_path and os.path.realpath(on_path) == os.path.realpath(called):
        return [os.path.basename(called)]
    return [called]


def command_line(*words: str) -> str:
    """A command line that runs in the shell that ran this one (:func:`program` first)."""
    return shlex.join([*program(), *words])


def echo_json(data: Any) -> None:
    click.echo(json_text(data))


def json_text(data: Any) -> str:
    """``data`` as the JSON documents print it (indented by 2; bytes as hex)."""
    return jsonlib.dumps(data, indent=2, default=_jsonable, ensure_ascii=False)


def _jsonable(value: Any) -> Any:
    if isinstance(value, bytes):
        return value.hex()
    return str(value)


def count_line(n: int, noun: str, note: str = "") -> str:
    """The count a listing prints after its table (to stderr, so a pipe gets the rows only):
    ``(1 run)``, ``(3 runs)``; ``note`` goes inside the brackets after the count."""
    return f"({n} {noun}{'s' if n != 1 else ''}{note})"


def clock(ts: float) -> str:
    """The UTC time of day with milliseconds, for tables whose rows share a day."""
    return dt.datetime.fromtimestamp(ts, dt.UTC).strftime("%H:%M:%S.%f")[:-3]


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


def render_table(
    headers: Sequence[str],
    rows: Sequence[Sequence[Any]],
    *,
    width: int | None = None,
    wrap: Sequence[str] = (),
) -> str:
    """Columns padded to their widest line, a rule under the header.

    A list or tuple in a cell is printed one item per line (a claim's eight devices stack up
    instead of widening the table). With ``width``, the columns named in ``wrap`` are wrapped
    (at spaces and after ``/``), widest first, until the table fits.
    """
    cells = _cells(rows)
    widths = _widths([len(h) for h in headers], cells)
    if width is not None:
        columns = [headers.index(name) for name in wrap]
        _shrink(widths, columns, headers, width)
        cells = [
            [_wrap(lines, widths[i]) if i in columns else lines for i, lines in enumerate(row)]
            for row in cells
        ]
    return "\n".join(_header_lines(headers, widths) + _row_lines(cells, widths))


def _cells(rows: Sequence[Sequence[Any]]) -> list[list[list[str]]]:
    return [[cell(v).split("\n") for v in row] for row in rows]


def _widths(widths: list[int], cells: list[list[list[str]]]) -> list[int]:
    """``widths`` widened to the widest line of each column of ``cells``."""
    widths = list(widths)
    for row in cells:
        for i, lines in enumerate(row):
            widths[i] = max(widths[i], *(len(line) for line in lines))
    return widths


def _header_lines(headers: Sequence[str], widths: Sequence[int]) -> list[str]:
    return [
        "  ".join(h.ljust(w) for h, w in zip(headers, widths, strict=True)).rstrip(),
        "  ".join("-" * w for w in widths),
    ]


def _row_lines(cells: list[list[list[str]]], widths: Sequence[int]) -> list[str]:
    out = []
    for row in cells:
        for n in range(max((len(lines) for lines in row), default=1)):
            parts = [(lines[n] if n < len(lines) else "") for lines in row]
            out.append("  ".join(p.ljust(w) for p, w in zip(parts, widths, strict=True)).rstrip())
    return out


class TableStream:
    """A table printed a batch of rows at a time, for rows that come as they are computed
    (``drasnap query``): the header and the first batch set the columns' widths, as
    :func:`render_table` would for them alone; a later value wider than its column widens
    that column from its batch on (the lines already printed stay as they were). A table
    that fits in its first batch is exactly :func:`render_table`'s."""

    def __init__(self, headers: Sequence[str]) -> None:
        self.headers = list(headers)
        self._widths: list[int] | None = None

    def lines(self, rows: Sequence[Sequence[Any]]) -> list[str]:
        """The lines that print ``rows`` (the header and its rule first, the first time)."""
        cells = _cells(rows)
        if self._widths is None:
            self._widths = _widths([len(h) for h in self.headers], cells)
            return _header_lines(self.headers, self._widths) + _row_lines(cells, self._widths)
        self._widths = _widths(self._widths, cells)
        return _row_lines(cells, self._widths)


_MIN_WRAPPED = 10


def _shrink(widths: list[int], columns: list[int], headers: Sequence[str], width: int) -> None:
    """Narrow the wrappable columns, in the order given, until the table is ``width`` wide."""
    excess = sum(widths) + 2 * (len(widths) - 1) - width
    for i in columns:
        if excess <= 0:
            return
        floor = max(len(headers[i]), _MIN_WRAPPED)
        cut = min(excess, widths[i] - floor)
        if cut > 0:
            widths[i] -= cut
            excess -= cut


def _wrap(lines: list[str], width: int) -> list[str]:
    out: list[str] = []
    for line in lines:
        pieces = re.findall(r"[^ /-]*[/-]|[^ /-]+ ?|\s+", line)
        current = ""
        for piece in pieces:
            while len(piece) > width:  # a word longer than the column: cut it
                if current:
                    out.append(current.rstrip())
                    current = ""
                out.append(piece[:width])
                piece = piece[width:]
            if len(current) + len(piece.rstrip()) > width and current:
                out.append(current.rstrip())
                current = ""
            current += piece
        out.append(current.rstrip())
    return out
