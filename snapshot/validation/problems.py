"""Field errors in the API server's words, collected per object and raised as one error.

The shapes are apimachinery's ``field.Error`` bodies (``pkg/util/validation/field/errors.go``):
``Required value``, ``Invalid value: <value>: <detail>``, ``Unsupported value: "x": supported
values: "a", "b"``, ``Duplicate value: "x"``, ``Not found: "x"``, ``Forbidden: <detail>``,
``Too long: may not be more than N bytes`` and ``Too many: N: must have at most M items``.

A bad value is printed as Go prints it: strings quoted, numbers and booleans bare, ``null`` for
nil. Where Go prints a struct or a typed slice with ``%#v`` (``[]bool{}``, ``[]string(nil)``),
the rule passes that text as `Shown`; other structs (Go would print pointer addresses) are
shown as compact JSON.

:class:`Checker` collects the problems of one object in the order the rules find them;
:func:`raise_first` raises the first, naming the paths of up to three more.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from functools import lru_cache
from typing import Any, Final

import orjson
from drasnap.snapshot.k8s.objects import go_quote
from drasnap.snapshot.validation.context import Context, FieldPath
from drasnap.snapshot.validation.formats import (
    C_IDENTIFIER_MSG,
    C_IDENTIFIER_RE,
    DEVICE_MAX_ID_LENGTH,
    DRIVER_NAME_MAX,
    POOL_NAME_MAX,
    dns_label,
    dns_subdomain,
    label_key,
    label_value,
)

__all__ = ["Checker", "Problem", "Shown", "as_list", "as_map", "raise_first"]

Problem = tuple[FieldPath, str]


class Shown(str):
    """A bad value already written the way Go prints it (``[]bool{}``): shown as is."""

    __slots__ = ()


def go_value(value: Any) -> str:
    """A bad value as ``field.Error`` prints it (structs: compact JSON)."""
    if isinstance(value, Shown):
        return str(value)
    if value is None:
        return "null"
    if value is True:
        return "true"
    if value is False:
        return "false"
    if isinstance(value, str):
        return go_quote(value)
    if isinstance(value, int | float):
        return str(value)
    return orjson.dumps(value, option=orjson.OPT_SORT_KEYS).decode()


def invalid(value: Any, detail: str) -> str:
    return f"Invalid value: {go_value(value)}: {detail}"


# The objects checked come from JSON (the engine's copy): plain dicts and lists, which a type
# test recognises faster than an isinstance against the abstract Mapping.
_EMPTY: Final[dict[str, Any]] = {}


def as_list(value: Any) -> list[Any]:
    return value if type(value) is list else []


def as_map(value: Any) -> Mapping[str, Any]:
    return value if type(value) is dict else _EMPTY


class Checker:
    """Collects the problems of one object, in field order."""

    __slots__ = ("problems",)

    def __init__(self) -> None:
        self.problems: list[Problem] = []

    def add(self, path: FieldPath, body: str) -> None:
        self.problems.append((path, body))

    # -- apimachinery's error types ------------------------------------------------------------

    def invalid(self, path: FieldPath, value: Any, detail: str) -> None:
        self.add(path, invalid(value, detail))

    def missing(self, path: FieldPath, detail: str = "") -> None:
        """``field.Required``."""
        self.add(path, f"Required value: {detail}" if detail else "Required value")

    def forbidden(self, path: FieldPath, detail: str) -> None:
        self.add(path, f"Forbidden: {detail}")

    def duplicate(self, path: FieldPath, value: Any) -> None:
        self.add(path, f"Duplicate value: {go_value(value)}")

    def not_found(self, path: FieldPath, value: Any, detail: str = "") -> None:
        body = f"Not found: {go_value(value)}"
        self.add(path, f"{body}: {detail}" if detail else body)

    def too_long(self, path: FieldPath, limit: int) -> None:
        self.add(path, f"Too long: may not be more than {limit} bytes")

    def too_many(self, path: FieldPath, items: Any, limit: int) -> bool:
        """``field.TooMany`` when the list or map ``items`` is over ``limit``; whether it was.

        Upstream's ``validateSlice``/``validateSet``/``validateMap`` then skip the items.
        """
        count = len(items) if isinstance(items, list | dict) else 0
        if count <= limit:
            return False
        items_word = "item" if limit == 1 else "items"
        self.add(path, f"Too many: {count}: must have at most {limit} {items_word}")
        return True

    def one_of(self, path: FieldPath, value: Any, allowed: tuple[str, ...]) -> None:
        if isinstance(value, str) and value not in allowed:
            supported = ", ".join(go_quote(v) for v in allowed)
            self.add(path, f"Unsupported value: {go_quote(value)}: supported values: {supported}")

    def unique(
        self, path: FieldPath, items: list[Any], key: str | None, *, child: str | None = None
    ) -> None:
        """``Duplicate value`` for each item whose ``key`` (the item itself when None) repeats;
        reported at the item, or at its ``child`` field."""
        seen: set[str] = set()
        for index, item in enumerate(items):
            value = item if key is None else item.get(key) if isinstance(item, Mapping) else None
            if not isinstance(value, str):
                continue
            if value in seen:
                where = (*path, index) if child is None else (*path, index, child)
                self.duplicate(where, value)
            seen.add(value)

    # -- name formats (the ``validate*Name`` helpers) ----------------------------------------

    def each(self, path: FieldPath, value: str, errs: Iterable[str]) -> None:
        for detail in errs:
            self.invalid(path, value, detail)

    def required(self, path: FieldPath, value: Any) -> bool:
        """Report a missing or empty string; whether there is a string to check."""
        if value is None or value == "":
            self.missing(path)
            return False
        return isinstance(value, str)

    def dns_label(self, path: FieldPath, value: Any) -> None:
        if self.required(path, value):
            self.each(path, value, dns_label(value))

    def dns_subdomain(self, path: FieldPath, value: Any) -> None:
        if self.required(path, value):
            self.each(path, value, dns_subdomain(value))

    def driver(self, path: FieldPath, value: Any) -> None:
        """``ValidateCSIDriverName``, which DRA driver names reuse."""
        if not self.required(path, value):
            return
        if len(value) > DRIVER_NAME_MAX:
            self.too_long(path, DRIVER_NAME_MAX)
        self.each(path, value, dns_subdomain(value.lower()))

    def pool(self, path: FieldPath, value: Any) -> None:
        if not self.required(path, value):
            return
        if len(value) > POOL_NAME_MAX:
            self.too_long(path, POOL_NAME_MAX)
        for part in value.split("/"):
            self.each(path, part, dns_subdomain(part))

    def label_key(self, path: FieldPath, value: Any) -> None:
        if self.required(path, value):
            self.each(path, value, label_key(value))

    def label_value(self, path: FieldPath, value: Any) -> None:
        if isinstance(value, str):
            self.each(path, value, label_value(value))

    def c_identifier(self, path: FieldPath, value: str) -> None:
        if len(value) > DEVICE_MAX_ID_LENGTH:
            self.too_long(path, DEVICE_MAX_ID_LENGTH)
        if not C_IDENTIFIER_RE.fullmatch(value):
            self.invalid(path, value, C_IDENTIFIER_MSG)

    def qualified_name(self, path: FieldPath, value: str) -> None:
        """An attribute or capacity name: ``C identifier`` or ``domain/C identifier``."""
        for body in _qualified_name_problems(value):
            self.add(path, body)

    def qualified_name_uncached(self, path: FieldPath, value: str) -> None:
        parts = value.split("/")
        if len(parts) == 1:
            self.c_identifier(path, parts[0])
            return
        # Kubernetes 1.36 leaves names with more than one slash to its declarative validation.
        domain, name = parts[0], parts[1]
        if not domain:
            self.invalid(path, "", "the domain must not be empty")
        else:
            self.driver(path, domain)
        if not name:
            self.invalid(path, "", "the name must not be empty")
        else:
            self.c_identifier(path, name)

    def fully_qualified_name(self, path: FieldPath, value: Any) -> None:
        if not isinstance(value, str):
            return
        self.qualified_name(path, value)
        if "/" not in value:
            detail = "a fully qualified name must be a domain and a name separated by a slash"
            self.invalid(path, value, detail)


@lru_cache(maxsize=8192)
def _qualified_name_problems(value: str) -> tuple[str, ...]:
    """The same attribute names recur on every device of every slice: checked once each."""
    c = Checker()
    c.qualified_name_uncached((), value)
    return tuple(body for _, body in c.problems)


def raise_first(c: Checker, ctx: Context) -> None:
    """Raise the first problem of ``c`` (if any), its path shown through ``ctx``, with the
    paths of up to three more.

    Raises:
        ObjectValidationError: when ``c`` holds a problem.
    """
    if not c.problems:
        return
    path, body = c.problems[0]
    others = list(dict.fromkeys(ctx.shown_path(p) for p, _ in c.problems[1:]))
    if others:
        more = len(c.problems) - 1
        body += f" (and {more} more problem{'s' if more > 1 else ''}: {', '.join(others[:3])}"
        body += ", ...)" if len(others) > 3 else ")"
    raise ctx.error(body, path)
