"""The views that the layers above the store register, to be created in every database a
writer opens (:mod:`drasnap.store.sql.views` creates them). Importing this costs no SQL library,
so a layer registers its views at import without making every command line wait for one.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from hashlib import blake2b

from drasnap.store.errors import InvalidValueError

__all__ = [
    "STORE_FUNCTIONS",
    "STORE_NAMES",
    "STORE_TABLES",
    "STORE_VIEWS",
    "View",
    "iso_utc_sql",
    "register_view",
    "registered",
]

_NAME = re.compile(r"[a-z_][a-z0-9_]{0,62}")
# What the migrations own, and a registered view cannot be named. The migrations are the only
# definition, and reading them here would load the SQL library with the first view; so these
# are written out, and tests/store/test_registered_views.py holds each equal to what the
# migrations leave in a database no layer registered a view in (``store.sql.tables`` for the
# tables; the views and functions of a plain store's database, on SQLite and PostgreSQL).
#: The store's own views: the schema's, read by the layers above.
STORE_VIEWS = frozenset({"current_objects", "layer_history", "object_versions"})
#: The store's SQL functions (PostgreSQL; on SQLite ``drasnap query --as-of`` defines
#: ``objects_as_of`` as a common table expression, which a view of that name would shadow).
STORE_FUNCTIONS = frozenset({"objects_as_of"})
STORE_TABLES = frozenset({"stores", "layers", "entries", "journal", "registered_views"})
#: Every name the store's schema takes.
STORE_NAMES = STORE_VIEWS | STORE_FUNCTIONS | STORE_TABLES


@dataclass(frozen=True, slots=True)
class View:
    """A view: its name and its ``SELECT`` in each dialect (the texts must agree).

    Raises:
        InvalidValueError: a name that is not a lowercase SQL identifier, or that a table or
            a view or function of the store already has.
    """

    name: str
    sqlite: str
    postgresql: str

    def __post_init__(self) -> None:
        if not _NAME.fullmatch(self.name):
            raise InvalidValueError(
                f"a view name is a lowercase SQL identifier (letters, digits, _), got {self.name!r}"
            )
        if self.name in STORE_NAMES:
            raise InvalidValueError(f"{self.name!r} is a table or view of the store itself")

    def select(self, dialect: str) -> str:
        """The ``SELECT`` for ``dialect`` (``sqlite`` or ``postgresql``)."""
        return self.postgresql if dialect == "postgresql" else self.sqlite

    def digest(self, dialect: str) -> str:
        return blake2b(self.select(dialect).encode(), digest_size=16).hexdigest()


_REGISTERED: dict[str, View] = {}


def register_view(view: View) -> None:
    """Have every store opened for writing from now on (in this process) create ``view``, or
    replace it when its text changed. Registering a view of the same name again replaces the
    earlier definition."""
    _REGISTERED.pop(view.name, None)
    _REGISTERED[view.name] = view


def registered() -> list[View]:
    """The registered views, in registration order."""
    return list(_REGISTERED.values())


def iso_utc_sql(expression: str, dialect: str) -> str:
    """SQL turning ``expression`` (seconds since the epoch) into ISO-8601 UTC text with
    milliseconds, ``2026-12-02T09:30:00.123+00:00``: exactly what
    ``datetime.fromtimestamp(ts, UTC).isoformat(timespec="milliseconds")`` gives, as
    ``drasnap history`` prints times. NULL stays NULL.

    Like Python, the fraction is rounded to microseconds, then cut to milliseconds.
    """
    e = f"({expression})"
    if dialect == "postgresql":
        micros = f"round(({e} - floor({e})) * 1000000)"
        seconds = f"(floor({e}) + floor({micros} / 1000000))"
        millis = f"(mod(({micros})::bigint, 1000000) / 1000)"
        day_time = (
            f"to_char(to_timestamp({seconds}) AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS')"
        )
        return f"{day_time} || '.' || lpad(({millis})::text, 3, '0') || '+00:00'"
    micros = f"CAST(round(({e} - CAST({e} AS INTEGER)) * 1000000) AS INTEGER)"
    seconds = f"(CAST({e} AS INTEGER) + {micros} / 1000000)"
    millis = f"({micros} % 1000000 / 1000)"
    day_time = f"strftime('%Y-%m-%dT%H:%M:%S', {seconds}, 'unixepoch')"
    return f"{day_time} || '.' || substr('00' || {millis}, -3, 3) || '+00:00'"
