"""Quantity fields: bare numbers become quantity strings, quantity strings are checked.

A fast checker per root model (built once, under a lock) tells whether any quantity field of
an object needs attention; only then does the slower walk, which builds paths for messages
and notes, run.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Callable
from typing import Any, Final, TypeAlias

import pydantic
from drasnap.snapshot.k8s.objects import quote
from drasnap.snapshot.validation.context import Context
from drasnap.snapshot.validation.schema import (
    FieldType,
    ListOf,
    MapOf,
    ModelRef,
    Scalar,
    model_info,
    prepare_quantity_fields,
)

# resource.Quantity syntax: signed decimal, then a binary-SI, decimal-SI or exponent suffix.
QUANTITY_RE: Final = re.compile(
    r"[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[KMGTPE]i|[numkMGTPE]|[eE][+-]?[0-9]+)?"
)

_SCHEMA_LOCK: Final = threading.Lock()


def root_checker(root: type[pydantic.BaseModel]) -> Callable[[Any], bool]:
    """Build (once, under a lock) what the checks need for a root class; its fast checker."""
    with _SCHEMA_LOCK:
        prepare_quantity_fields(root)
        return quantity_checker(root)


def fix_quantities(
    data: Any, t: FieldType, path: tuple[str | int, ...], ctx: Context, notes: list[str]
) -> Any:
    """Walk the fields that lead to quantities; turn bare numbers into quantity strings.

    Returns the value to store (the same object unless it was a number).
    """
    if isinstance(t, ModelRef):
        if isinstance(data, dict):
            quantity_fields = model_info(t.cls).quantity_fields
            assert quantity_fields is not None
            for key, field_type in quantity_fields.items():
                value = data.get(key)
                if value is not None:
                    new = fix_quantities(value, field_type, (*path, key), ctx, notes)
                    if new is not value:
                        data[key] = new
        return data
    if isinstance(t, ListOf):
        if isinstance(data, list):
            for index, item in enumerate(data):
                new = fix_quantities(item, t.item, (*path, index), ctx, notes)
                if new is not item:
                    data[index] = new
        return data
    if isinstance(t, MapOf):
        if isinstance(data, dict):
            for key, item in data.items():
                new = fix_quantities(item, t.value, (*path, key), ctx, notes)
                if new is not item:
                    data[key] = new
        return data
    if isinstance(t, Scalar) and t.quantity:
        return _quantity(data, path, ctx, notes)
    return data


Checker: TypeAlias = Callable[[Any], bool]
CHECKERS: dict[type[pydantic.BaseModel], Checker] = {}


def quantity_checker(cls: type[pydantic.BaseModel]) -> Checker:
    """A fast check: does any quantity field of this object need :func:`fix_quantities`?

    True when some quantity is a number or not a valid quantity string (or has a wrong
    type). It builds no paths; the slow walk then normalises and reports.
    """
    checker = CHECKERS.get(cls)
    if checker is not None:
        return checker
    scalars: list[str] = []  # quantity fields checked inline (saves a call per value)
    nested: list[tuple[str, Checker]] = []
    match = QUANTITY_RE.fullmatch

    def check_model(data: Any) -> bool:
        if type(data) is dict:
            for key in scalars:
                value = data.get(key)
                if value is not None and (type(value) is not str or match(value) is None):
                    return True
            for key, sub in nested:
                value = data.get(key)
                if value is not None and sub(value):
                    return True
        return False

    CHECKERS[cls] = check_model  # registered first: recursive types terminate
    quantity_fields = model_info(cls).quantity_fields
    assert quantity_fields is not None
    for wire, t in quantity_fields.items():
        if isinstance(t, Scalar):
            scalars.append(wire)
        else:
            nested.append((wire, checker_for(t)))
    return check_model


def checker_for(t: FieldType) -> Checker:
    if isinstance(t, ModelRef):
        return quantity_checker(t.cls)
    if isinstance(t, ListOf):
        item = checker_for(t.item)

        def check_list(data: Any) -> bool:
            if type(data) is list:
                for value in data:
                    if item(value):
                        return True
            return False

        return check_list
    if isinstance(t, MapOf):
        value_checker = checker_for(t.value)

        def check_map(data: Any) -> bool:
            if type(data) is dict:
                for value in data.values():
                    if value_checker(value):
                        return True
            return False

        return check_map
    match = QUANTITY_RE.fullmatch

    def check_quantity(data: Any) -> bool:
        return type(data) is not str or match(data) is None

    return check_quantity


def _quantity(value: Any, path: tuple[str | int, ...], ctx: Context, notes: list[str]) -> Any:
    if isinstance(value, str):
        if not QUANTITY_RE.fullmatch(value):
            raise ctx.error(
                f"{quote(value)} is not a valid quantity (expected a number with an "
                'optional suffix, such as "80Gi", "500m", "100" or "1e3")',
                path,
            )
        return value
    if isinstance(value, bool) or not isinstance(value, int | float):
        return value  # the model reports the wrong type
    text = str(int(value)) if isinstance(value, float) and value.is_integer() else str(value)
    if not QUANTITY_RE.fullmatch(text):
        raise ctx.error(f"number {value!r} is not a valid quantity", path)
    notes.append(ctx.note(path, f"number {value!r} taken as quantity {quote(text)}"))
    return text
