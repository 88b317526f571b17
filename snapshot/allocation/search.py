"""The depth-first search over claims -> requests -> (subrequest) -> device slots.

Paraphrases ``allocateOne`` and ``allocateDevice`` of
``internal/experimental/allocator_experimental.go`` (k8s.io/dynamic-resource-allocation):

- Claims in order, their requests in order; for a prioritized list, its subrequests in order
  until one can be allocated together with everything after it.
- For each device slot, candidates in pool order (see `snapshot.allocation.pools`); the next
  slot of the same request starts after the previous slot's device, so each combination is
  tried once.
- An "All" request takes its precomputed devices; any of them unusable ends that branch, a
  broken constraint is an error.
- A device is usable for a request when it is not in use (admin access: not by this claim),
  matches the class and request selectors (and, per device, the node), has room for the
  request's capacity, its counter set has room for its counters, its taints are tolerated and
  the claim's constraints still hold.
- When a claim would get more than 32 devices, the search gives up on that claim's current
  choices up to the nearest prioritized list (upstream's ``errAllocationResultMaxSizeExceeded``).
- The first complete solution wins.

Upstream's order of checks is kept, including what it leaves behind when a device is refused
after its counters were taken (a taint, a constraint, capacity): those counters stay taken for
the rest of the search, as in the scheduler. Counters are also kept per pool *name*, as
upstream keys them (``availableCounters``, ``consumedCounters``): the first pool of a name to
be looked at decides which counter sets are checked for every pool of that name.

The search is iterative: each frame is a generator that yields the next position after each
choice and undoes that choice when resumed or closed, so deep searches need no recursion.
"""

from __future__ import annotations

from collections.abc import Generator, Mapping
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from drasnap.snapshot import cel
from drasnap.snapshot.allocation import capacity as cap
from drasnap.snapshot.allocation.pools import Device, Pool, device_node_matches
from drasnap.snapshot.allocation.requests import MAX_DEVICES_PER_CLAIM, ClaimPlan, Request
from drasnap.snapshot.allocation.state import AllocatedState
from drasnap.snapshot.errors import AllocationError
from drasnap.snapshot.k8s.claims import DeviceID
from drasnap.snapshot.k8s.features import AllocatorFeatures
from drasnap.snapshot.k8s.kinds import klog_kobj

__all__ = ["Pick", "Search"]

_Frame = Generator[Any, bool | None, Any]
_EXCEEDED = object()  # a frame's return value: the claim would exceed 32 devices
_CATCH_NONE, _CATCH_CLAIM, _CATCH_SUBREQUEST = 0, 1, 2


@dataclass(slots=True, eq=False)
class Pick:
    """One device allocated for a request, with what it consumes when shared."""

    request: Request
    device: Device
    consumed: dict[str, cap.Amount] | None  # multi-allocatable: capacity taken
    shared: bool  # multi-allocatable: the result gets a share ID


class Search:
    """State of one allocation attempt on one node (upstream's ``allocator``)."""

    def __init__(
        self,
        claims: list[Mapping[str, Any]],
        pools: list[Pool],
        state: AllocatedState,
        features: AllocatorFeatures,
        node_name: str,
        labels: Mapping[str, str],
    ) -> None:
        self.claims = claims
        self.pools = pools
        self.state = state
        self.features = features
        self.node_name = node_name
        self.labels = labels
        self.plans: list[ClaimPlan] = []
        self.candidates: list[tuple[Device, Pool]] = (
            pools[0].candidates  # empty for an incomplete or invalid pool
            if len(pools) == 1
            else [candidate for pool in pools for candidate in pool.candidates]
        )
        # Device -> claim indices it is being allocated for (empty set: shared, no owner).
        self.allocating: dict[DeviceID, set[int]] = {}
        # Device -> capacity this attempt takes of it (multi-allocatable devices).
        self.allocating_capacity: dict[DeviceID, dict[str, Fraction]] = {}
        # Counters by pool *name*, as upstream keys them: available, and taken by this attempt
        # (created on first use).
        self.available: dict[str, dict[str, dict[str, Fraction]]] | None = None
        self.consumed: dict[str, dict[str, dict[str, Fraction]]] = {}
        self.picks: list[list[Pick]] = []
        self.selected: list[list[int]] = []  # per claim and request: the subrequest chosen
        self.solved = False
        # Selector results cached on the device depend on the CEL environment: whether
        # allowMultipleAllocations exists (DRAConsumableCapacity) and includes() does
        # (DRAListTypeAttributes). One cache key space per environment.
        self.cel_key = ("" if features.consumable_capacity else "\0") + (
            "\1" if features.list_type_attributes else ""
        )

    # --- eligibility -----------------------------------------------------------------------

    def selectable(self, req: Request, device: Device) -> bool:
        """Binding conditions (gate), class and request selectors, per-device node selection."""
        if device.binding and not self.features.device_binding_and_status:
            return False
        cached = req.cache.get(device)
        if cached is not None:
            return cached
        result = True
        for from_class, i, expression in req.selectors:
            if not self._matches(req, from_class, i, expression, device):
                result = False
                break
        if result and device.slice.per_device:
            result = device_node_matches(device, self.node_name, self.labels)
        req.cache[device] = result
        return result

    def _matches(
        self, req: Request, from_class: bool, index: int, expression: str, device: Device
    ) -> bool:
        key = self.cel_key + expression
        hit = device.matches.get(key)
        if hit is not None:
            return hit
        features = self.features
        try:
            program = cel.compile(expression, list_type_attributes=features.list_type_attributes)
        except AllocationError as exc:
            raise AllocationError(
                f"{self._who(req, from_class)}: selector #{index}: CEL compile error: {exc}"
            ) from exc
        try:
            if features.consumable_capacity:
                hit = cel.evaluate(program, device.activation())
            else:
                hit = cel.evaluate(program, device.activation(), consumable_capacity=False)
        except AllocationError as exc:
            raise AllocationError(
                f"{self._who(req, from_class)}: selector #{index} on device "
                f"{'/'.join(device.id)}: CEL runtime error: {exc}"
            ) from exc
        device.matches[key] = hit
        return hit

    def _who(self, req: Request, from_class: bool) -> str:
        """Whose selector it is, as upstream's messages say."""
        if from_class:
            return f"class {req.class_name}"
        return f"claim {klog_kobj(self.claims[req.claim_index])}"

    def capacity_fits(self, req: Request, device: Device) -> bool:
        """``CmpRequestOverCapacity`` against the allocated state and this attempt."""
        device_id = device.id
        allocated = self.state.capacity.get(device_id)
        allocating = self.allocating_capacity.get(device_id)
        if (
            req.capacity is None
            and allocated is None
            and allocating is None
            and not cap.has_policy(device)
        ):
            return True  # each capacity takes its whole value, which always fits
        return cap.fits(req.capacity, device, allocated, allocating)

    def expand_all(self, req: Request) -> None:
        """An "All" request's devices: every selectable device of every pool of the node."""
        devices: list[Device] = []
        req.all_devices = devices
        where = f"claim {klog_kobj(self.claims[req.claim_index])}, request {req.name}"
        for pool in self.pools:
            if pool.incomplete:
                raise AllocationError(
                    f"{where}: asks for all devices, but resource pool {pool.pool_id} is "
                    "currently being updated"
                )
            if pool.invalid:
                raise AllocationError(
                    f"{where}: asks for all devices, but resource pool {pool.pool_id} is "
                    "currently invalid"
                )
            for device in pool.devices:
                if not self.selectable(req, device):
                    continue
                if self.features.consumable_capacity and not self.capacity_fits(req, device):
                    continue
                devices.append(device)

    def _pool_of(self, device: Device) -> Pool:
        for pool in self.pools:
            if pool.driver == device.id[0] and pool.name == device.id[1]:
                return pool
        raise AssertionError(f"device {device.id} is in no pool of the node")

    # --- counters (DRAPartitionableDevices) --------------------------------------------------

    def _available_counters(self, pool: Pool) -> dict[str, dict[str, Fraction]]:
        if self.available is None:
            self.available = {}
        available = self.available.get(pool.name)
        if available is None:
            available = {name: dict(counters) for name, counters in pool.counter_sets.items()}
            is_allocated = self.state.is_allocated
            for info in (*pool.slices, *pool.other_slices):
                for device in info.devices:
                    if not device.consumes or not is_allocated(device.id):
                        continue
                    for set_name, counters in device.counters():
                        left = available.get(set_name)
                        if left is None:
                            continue
                        for name, value in counters.items():
                            if name in left:
                                left[name] -= value  # may go negative: then nothing is left
            self.available[pool.name] = available
        return available

    def _take_counters(self, device: Device, pool: Pool) -> bool:
        available = self._available_counters(pool)
        taken = self.consumed.setdefault(pool.name, {})
        for set_name, counters in device.counters():
            into = taken.setdefault(set_name, {})
            for name, value in counters.items():
                into[name] = into.get(name, 0) + value
        for set_name, counters in available.items():
            used = taken.get(set_name, {})
            for name, value in counters.items():
                if value < used.get(name, 0):
                    self._release_counters(device, pool)
                    return False
        return True

    def _release_counters(self, device: Device, pool: Pool) -> None:
        taken = self.consumed[pool.name]
        for set_name, counters in device.counters():
            into = taken[set_name]
            for name, value in counters.items():
                into[name] -= value

    # --- taking one device -------------------------------------------------------------------

    @staticmethod
    def _tolerated(taint: Mapping[str, Any], req: Request) -> bool:
        """``resourceclaim.ToleratesTaint`` for any of the request's tolerations."""
        for toleration in req.tolerations:
            effect = toleration.get("effect") or ""
            if effect and effect != taint.get("effect"):
                continue
            key = toleration.get("key") or ""
            if key and key != taint.get("key"):
                continue
            operator = toleration.get("operator") or "Equal"
            if operator == "Exists":
                return True
            if operator == "Equal" and (toleration.get("value") or "") == (
                taint.get("value") or ""
            ):
                return True
        return False

    def take(self, ci: int, req: Request, device: Device, pool: Pool, *, must: bool) -> bool:
        """``allocateDevice``: record the device for the request if every check passes."""
        features = self.features
        device_id = device.id
        multi = device.multi and features.consumable_capacity
        if not multi and req.admin and ci in self.allocating.get(device_id, ()):
            return False
        if not req.admin and (device_id in self.state.dedicated or self.allocating.get(device_id)):
            return False
        if device.consumes:
            if not features.partitionable_devices:
                return False
            in_use = device_id in self.state.capacity or device_id in self.allocating_capacity
            if not (multi and in_use) and not self._take_counters(device, pool):
                return False
        if (
            features.device_taints
            and device.taints
            and not all(self._tolerated(taint, req) for taint in device.taints)
        ):
            return False
        base, sub = req.base_name, req.subrequest
        constraints = self.plans[ci].constraints
        for i, constraint in enumerate(constraints):
            if not constraint.add(base, sub, device):
                if must:
                    raise AllocationError(
                        f"claim {klog_kobj(self.claims[ci])}, request {req.name}: cannot add "
                        f"device {'/'.join(device_id)} because a claim constraint would not be "
                        "satisfied"
                    )
                for previous in constraints[:i]:
                    previous.remove(base, sub)
                return False
        owners = self.allocating.setdefault(device_id, set())
        if not multi:
            owners.add(ci)
        consumed = None
        # Upstream checks the capacity again here. Only a shared device can have changed since
        # the candidate was checked (nothing else tracks capacity while allocating), so the
        # check is repeated for those alone.
        if multi:
            if not self.capacity_fits(req, device):
                return False
            consumed = cap.consumption(req.capacity, device)
            total = self.allocating_capacity.setdefault(device_id, {})
            for name, amount in consumed.items():
                total[name] = total.get(name, 0) + amount.value
        self.picks[ci].append(Pick(req, device, consumed or None, multi))
        return True

    def release(self, ci: int, device: Device, pool: Pool) -> None:
        """Undo the last successful `take` of claim ``ci``."""
        pick = self.picks[ci].pop()
        base, sub = pick.request.base_name, pick.request.subrequest
        for constraint in self.plans[ci].constraints:
            constraint.remove(base, sub)
        self.allocating[device.id].discard(ci)
        if pick.shared:
            if pick.consumed is not None:
                total = self.allocating_capacity[device.id]
                for name, amount in pick.consumed.items():
                    if name in total:
                        total[name] -= amount.value
                if not any(total.values()):
                    del self.allocating_capacity[device.id]
        elif device.consumes and self.features.partitionable_devices:
            self._release_counters(device, pool)

    # --- the search ----------------------------------------------------------------------------

    def run(self, plans: list[ClaimPlan]) -> bool:
        """Depth-first search; True when every request of every claim got its devices."""
        self.plans = plans
        self.picks = [[] for _ in plans]
        self.selected = [[0] * len(plan.slots) for plan in plans]
        if not plans:
            return True
        first = self._frame(("R", 0, 0))
        if first is None:
            return True
        stack: list[_Frame] = [first[0]]
        catches: list[int] = [first[1]]
        sent: bool | None = None
        while stack:
            try:
                position = stack[-1].send(sent)
            except StopIteration as stop:
                stack.pop()
                catches.pop()
                sent = False
                if stop.value is _EXCEEDED:
                    while catches and catches[-1] == _CATCH_NONE:
                        stack.pop().close()  # runs its undo
                        catches.pop()
                    sent = True
                continue
            frame = self._frame(position)
            if frame is None:
                self.solved = True
                return True
            stack.append(frame[0])
            catches.append(frame[1])
            sent = None
        return False

    def _frame(self, position: tuple[Any, ...]) -> tuple[_Frame, int] | None:
        """The frame that works on a position; None when past the last claim (a solution).

        Positions: ``("R", claim, request)`` starts a request (past the last one: the next
        claim), ``("D", claim, request, subrequest, slot, first candidate)`` fills a slot.
        """
        if position[0] == "D":
            _, ci, ri, si, di, start = position
            req = self.plans[ci].slots[ri].alternatives[si]
            return self._devices(ci, ri, si, req, di, start), _CATCH_NONE
        _, ci, ri = position
        if ri >= len(self.plans[ci].slots):
            if ci + 1 >= len(self.plans):
                return None
            return self._next_claim(ci + 1), _CATCH_CLAIM
        slot = self.plans[ci].slots[ri]
        if slot.prioritized:
            return self._subrequests(ci, ri), _CATCH_SUBREQUEST
        return self._devices(ci, ri, 0, slot.alternatives[0], 0, 0), _CATCH_NONE

    @staticmethod
    def _next_claim(ci: int) -> _Frame:
        # Catches an exceeded claim: the claims before it then try their other choices.
        yield ("R", ci, 0)

    def _subrequests(self, ci: int, ri: int) -> _Frame:
        all_exceeded = True
        for si in range(len(self.plans[ci].slots[ri].alternatives)):
            self.selected[ci][ri] = si
            exceeded = yield ("D", ci, ri, si, 0, 0)
            if not exceeded:
                all_exceeded = False
        return _EXCEEDED if all_exceeded else None

    def _devices(self, ci: int, ri: int, si: int, req: Request, di: int, start: int) -> _Frame:
        if req.all_mode and not req.all_devices:
            return None
        if di >= req.size:
            yield ("R", ci, ri + 1)
            return None
        if len(self.picks[ci]) + req.size - di > MAX_DEVICES_PER_CLAIM:
            return _EXCEEDED
        if req.all_mode:
            device = req.all_devices[di]
            pool = self._pool_of(device)
            if not self.take(ci, req, device, pool, must=True):
                return None
            try:
                yield ("D", ci, ri, si, di + 1, 0)
            finally:
                if not self.solved:  # a found solution keeps its devices
                    self.release(ci, device, pool)
            return None
        last = di + 1 >= req.size
        following = ("R", ci, ri + 1)
        candidates = self.candidates
        known = req.cache  # selectable or not, per device
        consumable = self.features.consumable_capacity
        # A request without capacity requests fits any device without request policies that
        # no one else consumes capacity of (each capacity then takes its whole value).
        no_requests = req.capacity is None
        consumed_elsewhere = self.state.capacity
        consumed_here = self.allocating_capacity
        allocating = self.allocating
        dedicated = self.state.dedicated
        admin = req.admin
        for index in range(start, len(candidates)):
            device, pool = candidates[index]
            device_id = device.id
            if admin:
                if ci in allocating.get(device_id, ()):
                    continue
            elif device_id in dedicated or allocating.get(device_id):
                continue
            ok = known.get(device)
            if ok is None or device.binding:
                ok = self.selectable(req, device)
            if not ok:
                continue
            if (
                consumable
                and not (
                    no_requests
                    and device.capacity_policy is False
                    and device_id not in consumed_elsewhere
                    and device_id not in consumed_here
                )
                and not self.capacity_fits(req, device)
            ):
                continue
            if not self.take(ci, req, device, pool, must=False):
                continue
            try:
                yield following if last else ("D", ci, ri, si, di + 1, index + 1)
            finally:
                if not self.solved:  # a found solution keeps its devices
                    self.release(ci, device, pool)
        return None
