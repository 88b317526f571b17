"""A consumable capacity's ``requestPolicy``, checked as the API server does.

Upstream: ``validateRequestPolicy``, ``validateValidRequestValues``,
``validateRequestPolicyValidValues``, ``validateRequestPolicyRange`` and
``validateRequestPolicyRangeStep`` in ``pkg/apis/resource/validation/validation.go`` (1.36: the
integer path; fractional ranges came after 1.36). Only a device with
``allowMultipleAllocations: true`` may have one (:mod:`snapshot.validation.slices`).

Quantities in messages are printed as Go's ``Quantity.String()`` does (canonical form in the
format they were written in: ``1Gi``, ``1500``, ``500m``). A duplicate ``validValues`` entry is
named by its exact decimal value.
"""

from __future__ import annotations

from collections.abc import Mapping
from fractions import Fraction
from math import ceil
from typing import Any, Final

from drasnap.snapshot.errors import ObjectValidationError
from drasnap.snapshot.k8s.quantity import Quantity
from drasnap.snapshot.validation.context import FieldPath
from drasnap.snapshot.validation.limits import CAPACITY_REQUEST_POLICY_DISCRETE_MAX_OPTIONS
from drasnap.snapshot.validation.problems import Checker, as_list

__all__ = ["check_request_policy", "go_quantity"]

_BINARY: Final = ("Ki", "Mi", "Gi", "Ti", "Pi", "Ei")
_DECIMAL: Final = {
    -9: "n",
    -6: "u",
    -3: "m",
    0: "",
    3: "k",
    6: "M",
    9: "G",
    12: "T",
    15: "P",
    18: "E",
}


class _Q:
    """A parsed quantity: its exact value and the format ``String()`` prints it in."""

    __slots__ = ("fmt", "value")

    def __init__(self, value: Fraction, fmt: str) -> None:
        self.value = value
        self.fmt = fmt

    def __str__(self) -> str:
        return go_quantity(self.value, self.fmt)


def _parse(text: Any) -> _Q | None:
    if not isinstance(text, str):
        return None
    try:
        value = Quantity.parse(text).value
    except ObjectValidationError:
        return None  # the engine reports malformed quantities
    suffix = text.lstrip("+-0123456789.")
    if suffix in _BINARY:
        return _Q(value, "BinarySI")
    return _Q(value, "DecimalExponent" if suffix[:1] in ("e", "E") else "DecimalSI")


def go_quantity(value: Fraction, fmt: str) -> str:
    """``Quantity.String()``: the canonical text of ``value`` in format ``fmt``."""
    if value == 0:
        return "0"
    if fmt == "BinarySI" and abs(value) >= 1024 and value.denominator == 1:
        number, exponent = int(value), 0
        while number % 1024 == 0 and exponent < len(_BINARY):
            number //= 1024
            exponent += 1
        return f"{number}{_BINARY[exponent - 1] if exponent else ''}"
    # Decimal: an integer mantissa with an exponent that is a multiple of 3, as large as exact.
    sign = "-" if value < 0 else ""
    value = abs(value)
    exponent = 0
    while value.denominator != 1:
        value *= 1000
        exponent -= 3
    number = int(value)
    while number % 1000 == 0:
        number //= 1000
        exponent += 3
    if fmt == "DecimalExponent" or exponent not in _DECIMAL:
        return f"{sign}{number}e{exponent}" if exponent else f"{sign}{number}"
    return f"{sign}{number}{_DECIMAL[exponent]}"


def check_request_policy(
    c: Checker, path: FieldPath, capacity_value: Any, policy: Mapping[str, Any]
) -> None:
    """``validateRequestPolicy`` for the ``requestPolicy`` at ``path``."""
    values = as_list(policy.get("validValues"))
    valid_range = policy.get("validRange")
    if values and valid_range is not None:
        c.forbidden(
            path,
            'exactly one policy can be specified, cannot specify "validValues" and "validRange" '
            "at the same time",
        )
        return
    capacity = _parse(capacity_value)
    default_text = policy.get("default")
    if values:
        if default_text is None:
            c.missing((*path, "default"), "required when validValues is defined")
            return
        default = _parse(default_text)
        if capacity is not None and default is not None:
            _valid_values(c, (*path, "validValues"), default, capacity, values)
    elif isinstance(valid_range, Mapping):
        if default_text is None:
            c.missing((*path, "default"), "required when validRange is defined")
            return
        default = _parse(default_text)
        if capacity is not None and default is not None:
            _valid_range(c, (*path, "validRange"), default, capacity, valid_range)


def _valid_values(c: Checker, path: FieldPath, default: _Q, capacity: _Q, texts: list[Any]) -> None:
    values = [_parse(text) for text in texts]
    if any(v is None for v in values):
        return
    options = [v for v in values if v is not None]
    for i in range(len(options) - 1):
        if options[i].value > options[i + 1].value:
            c.invalid(
                (*path, i + 1), str(options[i + 1]), "values must be sorted in ascending order"
            )
    found = False
    # validateSet: past the limit only the size is reported, and the default is not found.
    if not c.too_many(path, texts, CAPACITY_REQUEST_POLICY_DISCRETE_MAX_OPTIONS):
        seen: set[Fraction] = set()
        for i, option in enumerate(options):
            if option.value > capacity.value:
                c.invalid(
                    (*path, i), str(option), f"option is larger than capacity value: {capacity}"
                )
            if option.value == default.value:
                found = True
        for i, option in enumerate(options):
            if option.value in seen:
                c.duplicate((*path, i), _decimal(option.value))
            seen.add(option.value)
    if not found:
        c.invalid(path, str(default), "default value is not valid according to the requestPolicy")


def _decimal(value: Fraction) -> str:
    if value.denominator == 1:
        return str(value.numerator)
    digits = 0
    while (value * 10**digits).denominator != 1:
        digits += 1
    scaled = abs(value.numerator * 10**digits // value.denominator)
    whole, frac = divmod(scaled, 10**digits)
    return f"{'-' if value < 0 else ''}{whole}.{frac:0{digits}d}"


def _valid_range(
    c: Checker, path: FieldPath, default: _Q, capacity: _Q, valid_range: Mapping[str, Any]
) -> None:
    minimum = _parse(valid_range.get("min"))
    if minimum is None:
        if valid_range.get("min") is None:
            c.missing((*path, "min"), "required when validRange is defined")
        return
    if minimum.value > capacity.value:
        c.invalid((*path, "min"), str(minimum), f"min is larger than capacity value: {capacity}")
    if default.value < minimum.value:
        # Kubernetes 1.36 reports this one at "min" (later releases: at "default").
        c.invalid((*path, "min"), str(default), f"default is less than min: {minimum}")
    maximum = _parse(valid_range.get("max"))
    if maximum is not None:
        if minimum.value > maximum.value:
            c.invalid((*path, "max"), str(minimum), f"min is larger than max: {maximum}")
        if maximum.value > capacity.value:
            c.invalid(
                (*path, "max"), str(maximum), f"max is larger than capacity value: {capacity}"
            )
        if default.value > maximum.value:
            c.invalid((*path, "max"), str(default), f"default is more than max: {maximum}")
    step = _parse(valid_range.get("step"))
    if step is None:
        return
    if step.value <= 0:
        c.invalid((*path, "step"), str(step), "must be greater than zero")
        return
    one_step = _Q(minimum.value + step.value, minimum.fmt)
    if one_step.value > capacity.value:
        c.invalid(
            (*path, "step"),
            str(step),
            f"one step {one_step} is larger than capacity value: {capacity}",
        )
    for value in (default, maximum):
        if value is None:
            continue
        # The integer path: Quantity.Value() rounds up to a whole number.
        if (ceil(value.value) - ceil(minimum.value)) % ceil(step.value) != 0:
            c.invalid(
                (*path, "step"),
                str(value),
                f"value is not a multiple of a given step ({step}) from ({minimum})",
            )
