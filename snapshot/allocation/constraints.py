"""Claim constraints: ``matchAttribute`` and ``distinctAttribute``, with list-typed attributes.

Paraphrases ``internal/experimental/constraint.go`` and the ``matchAttributeConstraint`` of
``internal/experimental/allocator_experimental.go`` (k8s.io/dynamic-resource-allocation).
Constraints are monotonic: ``add`` is called for each device about to be allocated and says
whether the constraint still holds; every successful ``add`` is undone by exactly one
``remove`` with the same arguments when the search backtracks.

Upstream's bookkeeping is kept as it is, because it decides which devices are found:

- ``matchAttribute`` remembers the value of the first device of the set (or, with
  DRAListTypeAttributes, the intersection of the values seen so far, which ``remove`` does
  not widen again);
- ``distinctAttribute`` remembers one value per *request name* (a later device of the same
  request replaces the earlier one's value, and ``remove`` forgets it).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from drasnap.snapshot.allocation.pools import Device

__all__ = ["Constraint", "DistinctAttribute", "MatchAttribute", "lookup_attribute"]

#: (type, frozenset of values), or None for an attribute without a usable value.
_ValueSet = tuple[str, frozenset[Any]] | None

_LIST_KINDS = (("ints", "int"), ("bools", "bool"), ("strings", "string"), ("versions", "version"))
_SCALAR_KINDS = ("int", "bool", "string", "version")
# The scalar comparison's switch order (upstream compares on the new device's type).
_MATCH_ORDER = ("string", "int", "bool", "version")


def lookup_attribute(device: Device, name: str) -> Mapping[str, Any] | None:
    """The device's attribute by fully qualified name (the driver's domain may be omitted)."""
    attributes = device.spec.get("attributes") or {}
    if name in attributes:
        return attributes[name]  # type: ignore[no-any-return]
    domain, sep, ident = name.partition("/")
    if sep and domain == device.id[0] and ident in attributes:
        return attributes[ident]  # type: ignore[no-any-return]
    return None


def _scalar(attribute: Mapping[str, Any]) -> tuple[str | None, Any]:
    for kind in _MATCH_ORDER:
        if attribute.get(kind) is not None:
            return kind, attribute[kind]
    return None, None


def _as_set(attribute: Mapping[str, Any]) -> _ValueSet:
    """``attributeAsSet``: a non-empty list, else a scalar, as a set of values of one type."""
    for key, kind in _LIST_KINDS:
        values = attribute.get(key)
        if values:
            return kind, frozenset(values)
    for kind in _SCALAR_KINDS:
        if attribute.get(kind) is not None:
            return kind, frozenset((attribute[kind],))
    return None


def _intersects(a: _ValueSet, b: _ValueSet) -> bool:
    return a is not None and b is not None and a[0] == b[0] and not a[1].isdisjoint(b[1])


@dataclass(slots=True, eq=False)
class Constraint:
    """Which requests a constraint applies to (all of the claim's when none are listed)."""

    requests: frozenset[str]
    attribute: str
    lists: bool  # DRAListTypeAttributes

    def applies(self, request: str, subrequest: str) -> bool:
        if not self.requests:
            return True
        if request in self.requests:
            return True
        return bool(subrequest) and f"{request}/{subrequest}" in self.requests

    def add(self, request: str, subrequest: str, device: Device) -> bool:
        raise NotImplementedError

    def remove(self, request: str, subrequest: str) -> None:
        raise NotImplementedError


@dataclass(slots=True, eq=False)
class MatchAttribute(Constraint):
    """``matchAttribute``: every device in scope has the attribute, with one common value."""

    first: tuple[str | None, Any] = (None, None)
    common: _ValueSet = None
    count: int = 0

    def add(self, request: str, subrequest: str, device: Device) -> bool:
        if not self.applies(request, subrequest):
            return True
        found = lookup_attribute(device, self.attribute)
        if found is None:
            return False
        if self.lists:
            values = _as_set(found)
            if values is None:
                return False
            if self.count == 0:
                self.common = values
            elif not _intersects(self.common, values):
                return False
            else:
                assert self.common is not None and values is not None
                self.common = (self.common[0], self.common[1] & values[1])
        elif self.count == 0:
            self.first = _scalar(found)
        else:
            value = _scalar(found)
            if value[0] is None or value != self.first:
                return False
        self.count += 1
        return True

    def remove(self, request: str, subrequest: str) -> None:
        if self.applies(request, subrequest):
            self.count -= 1


@dataclass(slots=True, eq=False)
class DistinctAttribute(Constraint):
    """``distinctAttribute``: devices in scope have the attribute, with pairwise different
    values (disjoint lists with DRAListTypeAttributes)."""

    seen: dict[str, Mapping[str, Any]] = field(default_factory=dict)
    count: int = 0

    def add(self, request: str, subrequest: str, device: Device) -> bool:
        if not self.applies(request, subrequest):
            return True
        found = lookup_attribute(device, self.attribute)
        if found is None:
            return False
        if self.count > 0 and not self._distinct(found):
            return False
        self.seen[request] = found
        self.count += 1
        return True

    def remove(self, request: str, subrequest: str) -> None:
        if self.applies(request, subrequest):
            self.seen.pop(request, None)
            self.count -= 1

    def _distinct(self, found: Mapping[str, Any]) -> bool:
        if self.lists:
            values = _as_set(found)
            if values is None:
                return False
            return not any(_intersects(values, _as_set(other)) for other in self.seen.values())
        kind, value = _scalar(found)
        if kind is None:
            return not self.seen  # upstream fails on the first value it compares with
        return all(other.get(kind) is None or other[kind] != value for other in self.seen.values())
