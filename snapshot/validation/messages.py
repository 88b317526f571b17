"""pydantic's validation errors as one sentence with the wire path of the first problem."""

from __future__ import annotations

import datetime
import difflib
from typing import Any, Final

import pydantic
from drasnap.snapshot.errors import ObjectValidationError
from drasnap.snapshot.k8s.objects import describe_value, quote
from drasnap.snapshot.validation.context import Context
from drasnap.snapshot.validation.schema import (
    CLASS_PREFIX_RE,
    FieldType,
    ListOf,
    MapOf,
    ModelInfo,
    ModelRef,
    Scalar,
    model_info,
)

_DATETIME_HINT: Final = 'an RFC 3339 timestamp such as "2025-06-01T12:00:00Z"'


def translate(
    exc: pydantic.ValidationError, cls: type[pydantic.BaseModel], ctx: Context
) -> ObjectValidationError:
    """The error for pydantic's first problem, counting the others."""
    groups: dict[tuple[str | int, ...], list[Any]] = {}
    leaves: dict[tuple[str | int, ...], tuple[FieldType | None, ModelInfo | None]] = {}
    for err in exc.errors(include_url=False):
        path, leaf, owner = _resolve(cls, err["loc"])
        groups.setdefault(path, []).append(err)
        leaves[path] = (leaf, owner)
    if not groups:  # pragma: no cover - pydantic always reports at least one error
        return ctx.error(str(exc))
    path, errs = next(iter(groups.items()))
    leaf, owner = leaves[path]
    what = _explain(path, errs, leaf, owner)
    if len(groups) > 1:
        others = [ctx.shown_path(p) or "<object>" for p in list(groups)[1:4]]
        more = len(groups) - 1
        what += f" (and {more} more problem{'s' if more > 1 else ''}: {', '.join(others)}"
        what += ", ...)" if more > 3 else ")"
    return ctx.error(what, path)


def _resolve(
    cls: type[pydantic.BaseModel], loc: tuple[str | int, ...]
) -> tuple[tuple[str | int, ...], FieldType | None, ModelInfo | None]:
    """Wire path, leaf type and owning model of a pydantic error location."""
    path: list[str | int] = []
    t: FieldType | None = ModelRef(cls)
    owner: ModelInfo | None = None
    for element in loc:
        if isinstance(t, ModelRef):
            owner = model_info(t.cls)
            key = str(element)
            wire = key if key in owner.fields else owner.aliases.get(key, key)
            path.append(wire)
            t = owner.fields.get(wire)
        elif isinstance(t, ListOf) and isinstance(element, int):
            path.append(element)
            t = t.item
            owner = None
        elif isinstance(t, MapOf):
            path.append(str(element))
            t = t.value
            owner = None
        elif isinstance(t, Scalar) and t.union:
            break  # the rest is pydantic's name of the union member it tried
        else:
            path.append(element)
            t = None
            owner = None
    return tuple(path), t, owner


def _explain(
    path: tuple[str | int, ...], errs: list[Any], leaf: FieldType | None, owner: ModelInfo | None
) -> str:
    types_ = {err["type"] for err in errs}
    err = errs[0]
    if "missing" in types_:
        return "required field is missing"
    if "extra_forbidden" in types_:
        key = str(path[-1]) if path else "?"
        what = f"unknown field {quote(key)}"
        if owner is not None:
            known = sorted(owner.fields)
            close = difflib.get_close_matches(key, known, n=1, cutoff=0.6)
            if close:
                what += f" (did you mean {quote(close[0])}?)"
            elif len(known) <= 12:
                what += f" (known fields: {', '.join(known)})"
        return what
    got = err.get("input")
    expected = _expected(leaf) if leaf is not None else None
    if expected is None:
        return f"{err['msg']}, got {describe_value(got)}"
    hint = ""
    if expected.startswith(("a string", "a quantity")):
        if isinstance(got, bool):
            hint = " (YAML reads unquoted yes/no/on/off/true/false as booleans: quote it)"
        elif isinstance(got, float):
            hint = " (YAML reads unquoted 1.10 as the number 1.1: quote it)"
        elif isinstance(got, int):
            hint = " (quote it)"
    return f"expected {expected}, got {describe_value(got)}{hint}"


_EXPECTED_SCALARS: Final[dict[Any, str]] = {
    str: "a string",
    int: "an integer",
    bool: "a boolean (true or false)",
    float: "a number",
    datetime.datetime: _DATETIME_HINT,
    datetime.date: "a date",
    bytes: "a base64 string",
}


def _expected(t: FieldType) -> str | None:
    if isinstance(t, Scalar):
        if t.quantity:
            return 'a quantity string such as "80Gi"'
        if t.union:
            return "an integer or a string"
        return _EXPECTED_SCALARS.get(t.py_type)
    if isinstance(t, ModelRef):
        return f"an object ({CLASS_PREFIX_RE.sub('', t.cls.__name__)})"
    if isinstance(t, ListOf):
        return "a list"
    if isinstance(t, MapOf):
        return "a mapping"
    return None
