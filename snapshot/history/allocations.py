"""Allocation history: which devices each ResourceClaim got and lost, in which layer, and
whether that layer was kept.

Built from a store's journal (:class:`store.journal.reader.Journal`): an *event* is a put or delete
of a ``ResourceClaim`` whose ``status.allocation`` differs from the claim's allocation just
before it — ``allocate`` with the new allocation's devices, ``deallocate`` with the old one's
(a changed allocation gives both, at one sequence number). "Just before" is the latest earlier
write of the claim that no revert had discarded by then, so an allocation made in a reverted
branch is followed, in the next branch, by a fresh ``allocate`` rather than by nothing.
A revert itself is no event: it undoes the events of the layer it drops, whose *fate* is then
``reverted``. The SQL view ``allocation_events`` (docs/sql.md) gives the same rows, one per
device.

Also the claim summaries ``drasnap inspect`` prints: allocation, node and reservations.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Final

from drasnap.snapshot.errors import ArgumentError
from drasnap.snapshot.k8s.kinds import CLAIM_KIND
from drasnap.store import NEVER, Fate, Journal, JournalRecord, LayerHistory

__all__ = [
    "AllocatedDevice",
    "Allocation",
    "AllocationEvent",
    "ClaimSummary",
    "allocation_history",
    "allocation_of",
    "parse_device",
    "summarize_claims",
]

FATES: Final = (Fate.COMMITTED.value, Fate.REVERTED.value, Fate.OPEN.value)


@dataclass(frozen=True, slots=True)
class AllocatedDevice:
    """One ``status.allocation.devices.results`` entry."""

    request: str
    driver: str
    pool: str
    device: str

    @property
    def id(self) -> str:
        """``driver/pool/device``, as ``drasnap history --device`` takes it."""
        return f"{self.driver}/{self.pool}/{self.device}"


@dataclass(frozen=True, slots=True)
class Allocation:
    """A claim's allocation: its devices and the node it pins, if it pins exactly one."""

    devices: tuple[AllocatedDevice, ...]
    node: str | None
    raw: Any  # status.allocation as stored, to compare allocations by


@dataclass(frozen=True, slots=True)
class AllocationEvent:
    """An allocation or deallocation of a claim (see the module docstring)."""

    seq: int
    ts: float
    event: str  # "allocate" or "deallocate"
    claim: str  # "namespace/name"
    devices: tuple[AllocatedDevice, ...]
    node: str | None
    layer: int  # instance; 0 = the base
    label: str | None
    depth: int
    fate: Fate  # committed, reverted, open (unknown: the journal is incomplete)


@dataclass(frozen=True, slots=True)
class ClaimSummary:
    """A claim as ``drasnap inspect`` shows it."""

    claim: str
    allocated: bool
    devices: tuple[AllocatedDevice, ...]
    node: str | None
    reserved_for: tuple[str, ...]  # "pods/name" for each consumer


def parse_device(text: str) -> tuple[str, str, str]:
    """``DRIVER/POOL/DEVICE`` as ``(driver, pool, device)``. Pool names may contain ``/``;
    driver names (DNS subdomains) and device names (DNS labels) cannot.

    Raises:
        ArgumentError: fewer than three non-empty parts.
    """
    parts = text.split("/")
    if len(parts) < 3 or not parts[0] or not parts[-1] or not all(parts[1:-1]):
        raise ArgumentError(
            f"a device is DRIVER/POOL/DEVICE, e.g. gpu.example.com/node-a/gpu-0; got {text!r}"
        )
    return parts[0], "/".join(parts[1:-1]), parts[-1]


def _text(value: Any) -> str:
    return value if isinstance(value, str) else ""


def allocation_of(claim: Any) -> Allocation | None:
    """The allocation in a claim value (``None`` when unallocated, absent or not a claim)."""
    raw = _raw_allocation(claim)
    return None if raw is None else _allocation(raw)


def _raw_allocation(claim: Any) -> Mapping[str, Any] | None:
    if not isinstance(claim, Mapping):
        return None
    status = claim.get("status")
    raw = status.get("allocation") if isinstance(status, Mapping) else None
    return raw if raw and isinstance(raw, Mapping) else None


def _results(raw: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    devices = raw.get("devices")
    results = devices.get("results") if isinstance(devices, Mapping) else None
    return [r for r in results if isinstance(r, Mapping)] if isinstance(results, list) else []


def _allocation(raw: Mapping[str, Any]) -> Allocation:
    devices = tuple(
        AllocatedDevice(
            _text(r.get("request")),
            _text(r.get("driver")),
            _text(r.get("pool")),
            _text(r.get("device")),
        )
        for r in _results(raw)
    )
    return Allocation(devices, _pinned_node(raw.get("nodeSelector")), raw)


def _pinned_node(selector: Any) -> str | None:
    """The node a selector pins: one term whose one matchField is ``metadata.name In [node]``
    (how the scheduler records a node-local allocation)."""
    if not isinstance(selector, Mapping):
        return None
    terms = selector.get("nodeSelectorTerms")
    if not isinstance(terms, list) or len(terms) != 1 or not isinstance(terms[0], Mapping):
        return None
    fields = terms[0].get("matchFields")
    if not isinstance(fields, list) or len(fields) != 1 or not isinstance(fields[0], Mapping):
        return None
    match = fields[0]
    values = match.get("values")
    if (
        match.get("key") == "metadata.name"
        and match.get("operator") == "In"
        and isinstance(values, list)
        and len(values) == 1
        and isinstance(values[0], str)
    ):
        return values[0]
    return None


def summarize_claims(claims: Mapping[str, Any]) -> list[ClaimSummary]:
    """One summary per claim (key -> ResourceClaim value), sorted by key."""
    out = []
    for key in sorted(claims):
        value = claims[key]
        allocation = allocation_of(value)
        status = value.get("status") if isinstance(value, Mapping) else None
        reserved = status.get("reservedFor") if isinstance(status, Mapping) else None
        consumers = tuple(
            f"{_text(r.get('resource')) or '?'}/{_text(r.get('name'))}"
            for r in (reserved if isinstance(reserved, list) else ())
            if isinstance(r, Mapping)
        )
        out.append(
            ClaimSummary(
                key,
                allocation is not None,
                allocation.devices if allocation else (),
                allocation.node if allocation else None,
                consumers,
            )
        )
    return out


def allocation_history(
    journal: Journal,
    *,
    claim: str | None = None,
    node: str | None = None,
    device: tuple[str, str, str] | None = None,
    fate: str | None = None,
) -> list[AllocationEvent]:
    """Every allocation and deallocation event of the store's claims, in journal order.

    Filters (all optional, combined with AND): ``claim`` ("namespace/name"), ``node`` (the
    node the allocation pins), ``device`` ((driver, pool, device) among its devices), ``fate``
    of the layer the event happened in. A claim is read through the journal's key index and
    the layers through its layer index; a node or device filter first finds the claims that
    ever mentioned it (one pass over the journal).

    Raises:
        ArgumentError: ``fate`` is not one of committed, reverted, open.
    """
    if fate is not None and fate not in FATES:
        raise ArgumentError(f"fate must be one of {', '.join(FATES)}, got {fate!r}")
    keys: set[str] | None = None if claim is None else {claim}
    if keys is None and device is not None:
        driver, pool, name = device
        keys = journal.keys_containing(CLAIM_KIND, {"pool": pool, "device": name, "driver": driver})
    if keys is None and node is not None:
        keys = journal.keys_containing(CLAIM_KIND, {"values": [node]})
    if keys is None:
        writes = journal.kind_writes(CLAIM_KIND)
    else:
        writes = journal.key_writes(CLAIM_KIND, keys) if keys else []
    dropped = journal.dropped_at({w.layer for w in writes if w.layer})
    found = _changes(writes, dropped, node, device)
    if fate is not None:  # reverted <=> dropped: a first cut before the layers are read
        found = [
            c for c in found if (dropped.get(c[0].layer) is not None) == (fate == Fate.REVERTED)
        ]
    layers = journal.layers({w.layer for w, _, _ in found if w.layer})
    events = [_event(w, event, _allocation(raw), layers.get(w.layer)) for w, event, raw in found]
    return [e for e in events if fate is None or e.fate == fate]


def _mentions(
    raw: Mapping[str, Any], node: str | None, device: tuple[str, str, str] | None
) -> bool:
    if node is not None and _pinned_node(raw.get("nodeSelector")) != node:
        return False
    if device is None:
        return True
    return any((r.get("driver"), r.get("pool"), r.get("device")) == device for r in _results(raw))


_Change = tuple[JournalRecord, str, Mapping[str, Any]]


def _changes(
    writes: Iterable[JournalRecord],
    dropped: Mapping[int, int | None],
    node: str | None,
    device: tuple[str, str, str] | None,
) -> list[_Change]:
    """(write, "allocate" | "deallocate", allocation) for each event, in journal order."""
    by_key: dict[str, list[JournalRecord]] = {}
    for w in writes:
        if w.key is not None:
            by_key.setdefault(w.key, []).append(w)
    out: list[_Change] = []
    for rows in by_key.values():
        # The writes still visible, oldest first, as (dropped at, allocation). A write whose
        # layer is dropped later than a newer write's cannot be visible when that one is not
        # (layers form a stack), so dropping from the top is enough.
        visible: list[tuple[int, Mapping[str, Any] | None]] = []
        for w in rows:
            while visible and visible[-1][0] <= w.seq:
                visible.pop()
            before = visible[-1][1] if visible else None
            after = _raw_allocation(w.value) if w.op == "put" else None
            if before != after:
                if before is not None and _mentions(before, node, device):
                    out.append((w, "deallocate", before))
                if after is not None and _mentions(after, node, device):
                    out.append((w, "allocate", after))
            gone = dropped.get(w.layer) if w.layer else None
            visible.append((NEVER if gone is None else gone, after))
    out.sort(key=lambda c: (c[0].seq, c[1] != "deallocate"))
    return out


def _event(
    w: JournalRecord, event: str, allocation: Allocation, info: LayerHistory | None
) -> AllocationEvent:
    if w.layer == 0:
        label, fate = None, Fate.COMMITTED
    elif info is None:
        label, fate = None, Fate.UNKNOWN
    else:
        label, fate = info.label, info.fate
    assert w.key is not None
    return AllocationEvent(
        seq=w.seq,
        ts=w.ts,
        event=event,
        claim=w.key,
        devices=allocation.devices,
        node=allocation.node,
        layer=w.layer,
        label=label,
        depth=w.depth,
        fate=fate,
    )
