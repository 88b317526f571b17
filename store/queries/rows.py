"""The rows of a running read-only query: read as they come, stoppable, and timed.

``drasnap query`` prints a statement's rows while the database produces them, so an endless
statement (``WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT x FROM
c``) costs no more memory than a short one, and its first rows show at once. Such a statement
must also end when asked:

- :meth:`QueryRows.stop` may be called at any moment, from a signal handler or another thread:
  it tells the database (SQLite ``interrupt()``, PostgreSQL a cancel request for the backend)
  and the rows end with :class:`store.QueryStoppedError`.
- A time limit (``timeout``) ends the rows with :class:`store.QueryTimeoutError`. It counts
  from the moment the statement is sent to the last row read, the reader's time included (a
  reader that stops reading holds the statement open). The database enforces it while a row
  is being computed (SQLite: a progress handler, ``store.queries.readonly``; PostgreSQL:
  ``statement_timeout``), and this class between rows.

Both are checked before every row is handed on, so rows the driver had already buffered are
not printed after a stop.
"""

from __future__ import annotations

import contextlib
import itertools
import time
from collections.abc import Callable, Generator, Iterator
from typing import Any

from drasnap.store.errors import QueryStoppedError, QueryTimeoutError

__all__ = ["QueryRows"]

Row = tuple[Any, ...]


class QueryRows:
    """The rows of one read-only statement, read as the database produces them.

    Iterate it once (the statement is sent when the iteration starts). ``columns`` is known
    once the first row is read or the rows have run out; ``count`` is the number of rows
    handed on so far. Made by ``store.query_rows``, which also ends the statement.

    The iteration raises :class:`store.QueryStoppedError` after :meth:`stop`, and
    :class:`store.QueryTimeoutError` once ``timeout`` seconds have passed.
    """

    def __init__(
        self,
        display: str,
        source: Callable[[QueryRows], Generator[Row, None, None]],
        interrupt: Callable[[], None],
        *,
        max_rows: int | None = None,
        timeout: float | None = None,
    ) -> None:
        self.display = display
        self.timeout = timeout
        self.columns: tuple[str, ...] | None = None
        self.count = 0
        self._source = source(self)
        self._interrupt = interrupt
        self._max_rows = max_rows
        self._deadline: float | None = None
        self._stopped = False
        self._timed_out = False
        self._started = False

    def __iter__(self) -> Iterator[Row]:
        if self._started:
            raise RuntimeError("the rows of a query are read once")
        self._started = True
        if self.timeout is not None:
            self._deadline = time.monotonic() + self.timeout
        for row in itertools.islice(self._source, self._max_rows):
            self.check()
            self.count += 1
            yield row
        # (rows that ran out are all the rows, even when the time ran out as the last came)

    def stop(self) -> None:
        """Ask the database to stop the statement; safe in a signal handler or another thread
        (it never raises). The iteration then ends with :class:`store.QueryStoppedError`."""
        self._stopped = True
        with contextlib.suppress(Exception):  # (a connection already closed: nothing runs)
            self._interrupt()

    @property
    def stopped(self) -> bool:
        return self._stopped

    def should_end(self) -> bool:
        """Whether the statement should end now (stopped, or past its time); asked by the
        database while it computes a row (SQLite's progress handler)."""
        if self._stopped:
            return True
        if self._deadline is not None and time.monotonic() > self._deadline:
            self._timed_out = True
        return self._timed_out

    def check(self) -> None:
        """Raise the error that ends the rows, if they should end."""
        if not self.should_end():
            return
        if self._stopped:
            raise QueryStoppedError(
                f"the query on {self.display} was stopped after {_rows(self.count)}"
            )
        raise self.timeout_error()

    def timeout_error(self) -> QueryTimeoutError:
        """The error for a statement the database ended at the time limit."""
        seconds = self.timeout or 0.0
        return QueryTimeoutError(
            f"the query on {self.display} ran longer than its time limit of {seconds:g} s "
            f"and was stopped after {_rows(self.count)}",
            seconds=seconds,
        )

    def close(self) -> None:
        """End the statement where it is (the driver's cursor is closed)."""
        self._source.close()


def _rows(n: int) -> str:
    return f"{n} row{'s' if n != 1 else ''}"
