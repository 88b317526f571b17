"""Consumable capacity (DRAConsumableCapacity): does a request fit a device, and what it consumes.

Paraphrases ``internal/experimental/consumable_capacity.go`` of
k8s.io/dynamic-resource-allocation. A request may ask for an amount of each capacity of a
device (``capacity.requests``); a capacity's ``requestPolicy`` gives the amount taken when
nothing is asked (``default``, else the whole capacity) and rounds what is asked up to the
next valid amount (``validRange`` min + n * step, or the next of ``validValues``). A request
fits when every capacity of the device, after adding what is already allocated (the allocated
state) and what this allocation attempt already took, stays within its value, and no rounded
amount breaks the policy.

Quantities are exact fractions. Upstream rounds ``validRange`` arithmetic to integers
(``Quantity.Value()``, rounding up), and so does this module. Upstream decides "this amount is
the policy's default" by comparing the two Go values field by field; here two amounts count as
the same default when they come from the same quantity text, which is what that comparison
amounts to for quantities parsed from the same input.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from fractions import Fraction
from math import ceil
from typing import Any

from drasnap.snapshot.allocation.pools import Device, parse_quantity
from drasnap.snapshot.errors import AllocationError

__all__ = [
    "Amount",
    "DeviceCapacity",
    "capacity_of",
    "consumption",
    "fits",
    "format_binary",
    "has_policy",
    "parse_requests",
]


@dataclass(frozen=True, slots=True)
class Amount:
    """A quantity: its exact value, and the text it was written as (None when computed)."""

    value: Fraction
    text: str | None

    def render(self) -> str:
        return self.text if self.text is not None else format_binary(self.value)


@dataclass(frozen=True, slots=True)
class DeviceCapacity:
    """One capacity of a device with its request policy."""

    value: Amount
    has_policy: bool
    default: Amount | None = None
    range_min: Amount | None = None
    range_max: Amount | None = None
    range_step: Amount | None = None
    has_range: bool = False
    valid_values: tuple[Amount, ...] | None = None


_BINARY = (("Ei", 60), ("Pi", 50), ("Ti", 40), ("Gi", 30), ("Mi", 20), ("Ki", 10))


def format_binary(value: Fraction) -> str:
    """An integral amount as Kubernetes prints a binary-SI quantity (``3Ki``, ``4``)."""
    if value.denominator != 1:
        return str(float(value))
    number = value.numerator
    for suffix, shift in _BINARY:
        unit = 1 << shift
        if number and number % unit == 0:
            return f"{number // unit}{suffix}"
    return str(number)


def _amount(text: Any, where: str) -> Amount:
    return Amount(parse_quantity(text, where), str(text))


def capacity_of(device: Device) -> dict[str, DeviceCapacity]:
    """The device's capacities, parsed once (cached on the device record).

    Raises:
        AllocationError: a quantity of the device's capacity does not parse.
    """
    parsed = device.parsed_capacity
    if parsed is None:
        parsed = {}
        where = f"device {'/'.join(device.id)}: capacity"
        for name, entry in (device.spec.get("capacity") or {}).items():
            entry = entry or {}
            at = f"{where} {name}"
            policy = entry.get("requestPolicy")
            cap = DeviceCapacity(_amount(entry.get("value"), at), policy is not None)
            if policy is not None:
                valid_range = policy.get("validRange")
                values = policy.get("validValues")
                cap = DeviceCapacity(
                    cap.value,
                    True,
                    default=_optional(policy.get("default"), f"{at}.requestPolicy.default"),
                    has_range=valid_range is not None,
                    range_min=_optional((valid_range or {}).get("min"), f"{at} validRange.min"),
                    range_max=_optional((valid_range or {}).get("max"), f"{at} validRange.max"),
                    range_step=_optional((valid_range or {}).get("step"), f"{at} validRange.step"),
                    valid_values=(
                        None
                        if values is None
                        else tuple(_amount(v, f"{at} validValues") for v in values)
                    ),
                )
            parsed[str(name)] = cap
        device.parsed_capacity = parsed
    return parsed  # type: ignore[no-any-return]


def has_policy(device: Device) -> bool:
    """Whether some capacity of the device has a request policy (cached on the record)."""
    flag = device.capacity_policy
    if flag is None:
        flag = False
        for entry in (device.spec.get("capacity") or {}).values():
            if entry and entry.get("requestPolicy") is not None:
                flag = True
        device.capacity_policy = flag
    return flag


def _optional(text: Any, where: str) -> Amount | None:
    return None if text is None else _amount(text, where)


def parse_requests(capacity: Mapping[str, Any] | None, where: str) -> dict[str, Amount] | None:
    """A request's ``capacity`` (``{"requests": {name: quantity}}``), or None when not set."""
    if capacity is None:
        return None
    requests = capacity.get("requests")
    return {
        str(name): _amount(value, f"{where}: capacity request {name}")
        for name, value in (requests or {}).items()
    }


def _value(amount: Amount) -> int:
    """Go's ``Quantity.Value()``: the value rounded up to an integer."""
    return ceil(amount.value)


def _step(cap: DeviceCapacity) -> int:
    assert cap.range_step is not None
    step = _value(cap.range_step)
    if step <= 0:
        raise AllocationError(
            f"capacity request policy: validRange.step {cap.range_step.render()} must be positive"
        )
    return step


def _consumed(requested: Amount | None, cap: DeviceCapacity) -> Amount:
    """``calculateConsumedCapacity``: what one allocation takes of this capacity."""
    if requested is None:
        return cap.default if cap.default is not None else cap.value
    if not cap.has_policy:
        return requested
    if cap.has_range and cap.range_min is not None:
        if requested.value < cap.range_min.value:
            return cap.range_min
        if cap.range_step is None:
            return requested
        minimum, step = _value(cap.range_min), _step(cap)
        added = _value(requested) - minimum
        n = added // step + (added % step != 0)
        return Amount(Fraction(minimum + step * n), None)
    if cap.valid_values is not None:
        for valid in cap.valid_values:
            if requested.value <= valid.value:
                return valid
    return requested


def _violates(amount: Amount, cap: DeviceCapacity) -> bool:
    """``violatesPolicy``: a policy's default is always fine; otherwise range and values."""
    if not cap.has_policy:
        return False
    if cap.default is not None and amount.text is not None and amount.text == cap.default.text:
        return False
    if cap.has_range:
        if cap.range_max is not None and amount.value > cap.range_max.value:
            return True
        if cap.range_step is not None:
            minimum = _value(cap.range_min) if cap.range_min is not None else 0
            return (_value(amount) - minimum) % _step(cap) != 0
        return False
    if cap.valid_values:
        return all(amount.value != valid.value for valid in cap.valid_values)
    return False


def fits(
    requests: Mapping[str, Amount] | None,
    device: Device,
    allocated: Mapping[str, Fraction] | None,
    allocating: Mapping[str, Fraction] | None,
) -> bool:
    """``CmpRequestOverCapacity``: whether one more allocation of ``requests`` fits the device.

    ``allocated`` is what other claims already consume on the device (the allocated state),
    ``allocating`` what this allocation attempt already took of it. A request for a capacity
    the device does not have never fits.
    """
    caps = capacity_of(device)
    if requests and any(name not in caps for name in requests):
        return False
    for name, cap in caps.items():
        amount = _consumed(requests.get(name) if requests else None, cap)
        if _violates(amount, cap):
            return False
        total = amount.value
        if allocated:
            total += allocated.get(name, 0)
        if allocating:
            total += allocating.get(name, 0)
        if total > cap.value.value:
            return False
    return True


def consumption(requests: Mapping[str, Amount] | None, device: Device) -> dict[str, Amount]:
    """``GetConsumedCapacityFromRequest``: what the allocation takes of every capacity."""
    return {
        name: _consumed(requests.get(name) if requests else None, cap)
        for name, cap in capacity_of(device).items()
    }
