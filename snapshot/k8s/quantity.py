"""Exact Kubernetes quantities, as the CEL selectors and the resource fit see them.

`Quantity` mirrors ``k8s.io/apimachinery/pkg/api/resource.Quantity``: parsing follows
``ParseQuantity`` (same grammar, same suffixes, non-zero values rounded away from zero to a
multiple of 1n, binary-SI values capped at 2^63-1) and the value is kept exactly as a
`fractions.Fraction`, so ``Quantity.parse("80Gi") == Quantity.parse("81920Mi")``.

Known simplification: Go's ``Quantity.AsInt64`` (behind CEL ``isInteger``/``asInteger``) also
depends on the internal representation (``"1000m".isInteger()`` is false in Go); here a quantity
is an integer when its value is integral and fits in an int64.
"""

from __future__ import annotations

import re
from fractions import Fraction
from functools import lru_cache, total_ordering
from math import ceil

from drasnap.snapshot.errors import ObjectValidationError

__all__ = ["Quantity"]

_INT64_MAX = 2**63 - 1
_INT64_MIN = -(2**63)
_NANO = 10**9
# Exponents beyond this are refused instead of building astronomically large integers.
_MAX_EXPONENT = 10_000

_DECIMAL_SUFFIXES = {
    "n": -9, "u": -6, "m": -3, "": 0, "k": 3, "M": 6, "G": 9, "T": 12, "P": 15, "E": 18,
}  # fmt: skip
_BINARY_SUFFIXES = {"Ki": 10, "Mi": 20, "Gi": 30, "Ti": 40, "Pi": 50, "Ei": 60}
_SUFFIX_CHARS = frozenset("eEinumkKMGTP")
_DIGITS = frozenset("0123456789")
_EXPONENT_RE = re.compile(r"[+-]?[0-9]+")
_FORMAT_ERROR = (
    "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"
)


def _scan(text: str) -> tuple[bool, str, str, str]:
    """Split a quantity into (positive, integer digits, fraction digits, suffix) like Go does."""
    positive = True
    pos = 0
    end = len(text)
    if text[0] in "+-":
        positive = text[0] == "+"
        pos = 1
    while pos < end and text[pos] == "0":
        pos += 1
    if pos >= end:
        return positive, "0", "", ""
    start = pos
    while pos < end and text[pos] in _DIGITS:
        pos += 1
    num = text[start:pos] or "0"
    denom = ""
    if pos < end and text[pos] == ".":
        pos += 1
        start = pos
        while pos < end and text[pos] in _DIGITS:
            pos += 1
        denom = text[start:pos]
    suffix_start = pos
    while pos < end and text[pos] in _SUFFIX_CHARS:
        pos += 1
    if pos < end and text[pos] in "+-":
        pos += 1
    while pos < end and text[pos] in _DIGITS:
        pos += 1
    if pos < end:
        raise ObjectValidationError(f"invalid quantity {text!r}: {_FORMAT_ERROR}")
    return positive, num, denom, text[suffix_start:]


@lru_cache(maxsize=4096)
def _parse(text: str) -> Fraction:
    if not text:
        raise ObjectValidationError(f"invalid quantity {text!r}: {_FORMAT_ERROR}")
    positive, num, denom, suffix = _scan(text)
    binary = False
    if suffix in _DECIMAL_SUFFIXES:
        exponent = _DECIMAL_SUFFIXES[suffix]
    elif suffix in _BINARY_SUFFIXES:
        exponent = _BINARY_SUFFIXES[suffix]
        binary = True
    elif len(suffix) > 1 and suffix[0] in "eE" and _EXPONENT_RE.fullmatch(suffix[1:]):
        exponent = int(suffix[1:])
        if abs(exponent) > _MAX_EXPONENT:
            raise ObjectValidationError(f"invalid quantity {text!r}: exponent out of range")
    else:
        raise ObjectValidationError(f"invalid quantity {text!r}: unable to parse quantity's suffix")
    magnitude = Fraction(int(num + denom), 10 ** len(denom))
    magnitude *= Fraction(2) ** exponent if binary else Fraction(10) ** exponent
    if magnitude and magnitude.denominator != 1:
        # Go keeps at most nano precision and rounds a finer value away from zero.
        magnitude = Fraction(ceil(magnitude * _NANO), _NANO)
    if binary and magnitude > _INT64_MAX:
        magnitude = Fraction(_INT64_MAX)
    return magnitude if positive else -magnitude


@total_ordering
class Quantity:
    """An exact resource quantity (``resource.Quantity``), compared and hashed by value."""

    __slots__ = ("value",)

    value: Fraction

    def __init__(self, value: Fraction | int) -> None:
        self.value = Fraction(value)

    @classmethod
    def parse(cls, text: str) -> Quantity:
        """Parse ``text`` as ``resource.ParseQuantity`` does.

        >>> Quantity.parse("1.5Gi") == Quantity.parse("1536Mi")
        True

        Raises:
            ObjectValidationError: ``text`` is not a quantity.
        """
        return cls(_parse(text))

    @staticmethod
    def is_valid(text: str) -> bool:
        """Whether ``text`` parses as a quantity (CEL ``isQuantity``)."""
        try:
            _parse(text)
        except ObjectValidationError:
            return False
        return True

    def compare(self, other: Quantity) -> int:
        """-1, 0 or 1 as ``self`` is smaller than, equal to or larger than ``other``."""
        return (self.value > other.value) - (self.value < other.value)

    def add(self, other: Quantity | int) -> Quantity:
        return Quantity(self.value + (other.value if isinstance(other, Quantity) else other))

    def sub(self, other: Quantity | int) -> Quantity:
        return Quantity(self.value - (other.value if isinstance(other, Quantity) else other))

    def sign(self) -> int:
        return (self.value > 0) - (self.value < 0)

    def is_integer(self) -> bool:
        """Whether `as_integer` succeeds (integral value within int64)."""
        return self.value.denominator == 1 and _INT64_MIN <= self.value <= _INT64_MAX

    def as_integer(self) -> int:
        """The value as an int64.

        Raises:
            ObjectValidationError: the value is fractional or does not fit in an int64.
        """
        if not self.is_integer():
            raise ObjectValidationError("cannot convert value to integer")
        return int(self.value)

    def as_approximate_float(self) -> float:
        return float(self.value)

    def rounded_up(self) -> int:
        """The value rounded up to an integer, as ``Quantity.Value()``.

        >>> Quantity.parse("1.5").rounded_up(), Quantity.parse("1Ki").rounded_up()
        (2, 1024)
        """
        return ceil(self.value)

    def milli_value(self) -> int:
        """The value in thousandths, rounded up, as ``Quantity.MilliValue()`` (cpu in
        millicores).

        >>> Quantity.parse("250m").milli_value(), Quantity.parse("1.0001m").milli_value()
        (250, 2)
        """
        return ceil(self.value * 1000)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Quantity):
            return NotImplemented
        return self.value == other.value

    def __lt__(self, other: Quantity) -> bool:
        return self.value < other.value

    def __hash__(self) -> int:
        return hash(("Quantity", self.value))

    def __repr__(self) -> str:
        return f"Quantity({self.value})"
