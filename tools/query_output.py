"""Rows printed as they come (``drasnap query``): a table, JSON or CSV, a batch at a time.

The rows of a query arrive while the database computes them, perhaps without end: each format
prints a batch as soon as it is gathered (:data:`BATCH_ROWS` rows, or what came in
:data:`BATCH_SECONDS`), so memory stays flat and the first rows show at once.

- JSON: one array, written exactly as ``json.dumps(rows, indent=2)`` would write it; a query
  that ends with an error leaves the array unclosed (no ``]``), so no reader takes part of
  the rows for all of them.
- CSV: the header row, then the rows.
- Table: see :class:`tools.output.TableStream` (the first batch sets the widths; a table that
  fits in one batch prints as before).
"""

from __future__ import annotations

import csv
import textwrap
import time
from collections.abc import Callable, Iterable, Sequence
from typing import Any

import click
from drasnap.tools.output import TableStream, cell, count_line, json_text

#: A batch is printed when it holds this many rows...
BATCH_ROWS = 1000
#: ...or when its first row came this long ago (checked as each row arrives).
BATCH_SECONDS = 0.5

Row = Sequence[Any]


class RowPrinter:
    """Prints rows in one of the three formats; :meth:`add` gathers, :meth:`flush` prints."""

    def __init__(self, fmt: str) -> None:
        self.fmt = fmt
        self.printed = 0
        self._batch: list[Row] = []
        self._since = 0.0
        self._table: TableStream | None = None
        self._csv = csv.writer(_ClickWriter(), lineterminator="\n")

    def add(self, columns: Sequence[str], row: Row) -> None:
        if not self._batch:
            self._since = time.monotonic()
        self._batch.append(row)
        if len(self._batch) >= BATCH_ROWS or time.monotonic() - self._since >= BATCH_SECONDS:
            self.flush(columns)

    def flush(self, columns: Sequence[str] | None) -> None:
        """Print the rows gathered (nothing when the columns are not known: no row came)."""
        batch, self._batch = self._batch, []
        if not batch or columns is None:
            return
        if self.fmt == "json":
            start = "[\n" if not self.printed else ",\n"
            items = (json_text(dict(zip(columns, row, strict=True))) for row in batch)
            click.echo(start + ",\n".join(textwrap.indent(t, "  ") for t in items), nl=False)
        elif self.fmt == "csv":
            if not self.printed:
                self._csv.writerow(columns)
            self._csv.writerows([cell(v) for v in row] for row in batch)
        else:
            if self._table is None:
                self._table = TableStream(columns)
            click.echo("\n".join(self._table.lines(batch)))
        self.printed += len(batch)

    def print_all(self, rows: Iterable[Row], columns: Callable[[], Sequence[str] | None]) -> None:
        """Print ``rows`` to their end (``columns()`` names them once a row has come). When the
        rows end with an error, the rows gathered before it are printed first."""
        try:
            for row in rows:
                self.add(columns() or (), row)
        except Exception:
            self.flush(columns())
            raise
        self.end(columns() or ())

    def end(self, columns: Sequence[str]) -> None:
        """The rows ran out: print the rest, close the JSON array, and the count (table)."""
        self.flush(columns)
        if self.fmt == "json":
            click.echo("\n]" if self.printed else "[]")
        elif self.fmt == "csv":
            if not self.printed:
                self._csv.writerow(columns)
        else:
            if self._table is None:
                click.echo("\n".join(TableStream(columns).lines([])))
            click.echo(count_line(self.printed, "row"), err=True)


class _ClickWriter:
    """A file-like object for csv.writer that prints through click (CliRunner captures it)."""

    def write(self, text: str) -> int:
        click.echo(text, nl=False)
        return len(text)
