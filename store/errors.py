"""Errors raised by the store package.

The tree::

    StoreError                     base of everything raised by store/
    ├── InvalidValueError          a value that is not JSON, or an empty/non-string kind or key
    │                              (also ValueError)
    ├── StoreClosedError           an operation on a closed store
    ├── ReadOnlyError              a write on a store opened with readonly=True
    ├── StoreNotFoundError         read-only open of a store that does not exist (also KeyError)
    ├── StoreLockedError           another process holds the named store for writing
    ├── NotADatabaseError          the target is a directory, or not a drasnap database
    ├── SchemaVersionError         the database was written by a newer drasnap (or needs upgrading)
    ├── MissingDriverError         the URL needs a database driver that is not installed
    ├── JournalError               a journal is incomplete or inconsistent for a replay/history
    ├── QueryStoppedError          a read-only query stopped by its caller (a signal, say)
    ├── QueryTimeoutError          a read-only query that ran past its time limit
    └── DatabaseError              any other failure of the database underneath

sqlite3, SQLAlchemy and Alembic exceptions never leave ``store/``: they are translated to these
classes (with ``raise ... from exc``) in one place, ``store.sql.engines.translate``; a driver's
message quoted in one is put on one line first (:func:`one_line`).
"""

from __future__ import annotations

import re

#: A database URL's user and password in free text: ``scheme://USER:PASSWORD@``.
_URL_PASSWORD = re.compile(r"(?P<head>\b[A-Za-z][A-Za-z0-9+.-]*://[^\s:/@]*):[^\s@]*@")


def hide_passwords(text: str) -> str:
    """``text`` with the password of every database URL in it replaced by ``***``, as
    SQLAlchemy shows a URL (``URL.render_as_string(hide_password=True)``).

    >>> hide_passwords("run 'x' in postgresql+psycopg://postgres:SeCrEt@db:5432/sim failed")
    "run 'x' in postgresql+psycopg://postgres:***@db:5432/sim failed"
    """
    return _URL_PASSWORD.sub(r"\g<head>:***@", text)


def one_line(text: object) -> str:
    """``text`` (an exception, say) as one line: every run of whitespace, newlines included,
    becomes one space, and the ends are trimmed.

    >>> one_line("database is locked\\n  (while flushing)")
    'database is locked (while flushing)'
    """
    return " ".join(str(text).split())


class StoreError(Exception):
    """Base class of every error raised by ``store``."""


class InvalidValueError(StoreError, ValueError):
    """A value is not JSON-compatible, or a kind or key is empty or not a string.

    ``path`` names where inside the value the problem is (``$.spec.items[3]``), or is ``None``.
    """

    def __init__(self, message: str, *, path: str | None = None) -> None:
        super().__init__(message)
        self.path = path


class StoreClosedError(StoreError):
    """An operation was attempted on a closed store."""


class ReadOnlyError(StoreError):
    """A write was attempted on a store opened with ``readonly=True``, or ``store.query`` refused
    a statement (a write, a function that reaches outside the tables, a catalog of secrets)."""


class StoreNotFoundError(StoreError, KeyError):
    """A named store does not exist in the database (only raised for read-only opens)."""

    def __str__(self) -> str:  # KeyError would print the repr of its argument
        return str(self.args[0]) if self.args else ""


class StoreLockedError(StoreError):
    """Another process holds the named store for writing.

    ``name`` is the store's name and ``database`` where it lives (a URL without its
    password); ``pid`` and ``host`` identify the holder where known.
    """

    def __init__(
        self,
        message: str,
        *,
        name: str,
        pid: int | None,
        host: str | None,
        database: str | None = None,
    ) -> None:
        super().__init__(message)
        self.name = name
        self.pid = pid
        self.host = host
        self.database = database


class NotADatabaseError(StoreError):
    """The target is a directory, not a database file, or a database drasnap did not create."""


class SchemaVersionError(StoreError):
    """The database's schema revision is unknown to this drasnap (written by a newer version)."""


class MissingDriverError(StoreError):
    """The database URL needs a driver that is not installed (e.g. psycopg for PostgreSQL)."""


class JournalError(StoreError):
    """A journal cannot be used for what was asked: it is incomplete (a writer ran with
    ``journal=False``, or rows are missing) or inconsistent (an operation that cannot follow
    the ones before it)."""


class DatabaseError(StoreError):
    """Any other failure of the database underneath (disk full, I/O error, lost connection)."""


class QueryStoppedError(StoreError):
    """A read-only query was stopped by its caller (``QueryRows.stop``: a signal, say) while
    it ran; the rows read before were delivered."""


class QueryTimeoutError(StoreError):
    """A read-only query ran longer than the time it was given (``seconds``) and was stopped
    by the database; the rows read before were delivered."""

    def __init__(self, message: str, *, seconds: float) -> None:
        super().__init__(message)
        self.seconds = seconds
