"""The structured-parameters DRA allocator: which devices of a node a pod's claims get.

A Python port of the scheduler's allocator in ``k8s.io/dynamic-resource-allocation/structured``
(stable control flow, incubating's deterministic order). For one node it gathers the pools
(`snapshot.pools`), validates every claim, then runs a depth-first search over claims ->
requests -> device slots, trying pools by (driver, pool), slices by name and devices in listed
order; the first complete solution wins. Errors and their texts are upstream's.

Supported: ExactCount (``count`` defaults to 1) and All, DeviceClass and request CEL selectors
(`snapshot.cel`), adminAccess, ``matchAttribute`` constraints, the 32-device claim limit, pool
generations / ``resourceSliceCount`` / invalid pools, nodeName / nodeSelector / allNodes slices,
result config (FromClass / FromClaim) and result nodeSelector.

Not supported yet (a claim using them raises `AllocationError` saying so): prioritized lists
(``firstAvailable``), consumable capacity (request ``capacity``), ``distinctAttribute``
constraints and tolerations. On the slice side, behaviour is upstream's with those feature gates
off: slices with ``sharedCounters`` or ``perDeviceNodeSelection`` are ignored, devices that
consume counters or carry a NoSchedule/NoExecute taint are never allocated, devices with binding
conditions never match, and a list-typed attribute makes any selector on its device fail.

Performance: CEL programs are compiled once per expression text, each device's CEL activation
is built once, and selector results are cached per (device, expression) across calls. This
relies on ResourceSlice dicts never being mutated after creation (see `snapshot.pools`).
"""

from __future__ import annotations

import copy
from collections.abc import Container, Iterable, Iterator, Mapping, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass, field
from typing import Any

from snapshot import cel
from snapshot.claims import DeviceID
from snapshot.errors import AllocationError
from snapshot.pools import Device, Pool, gather_pools

__all__ = ["MAX_DEVICES_PER_CLAIM", "allocate"]

#: ``resourceapi.AllocationResultsMaxSize``: at most this many devices per claim.
MAX_DEVICES_PER_CLAIM = 32

Obj = Mapping[str, Any]


def allocate(
    node: Obj,
    claims: Sequence[Obj],
    *,
    classes: Iterable[Obj] | Mapping[str, Obj],
    slices: Iterable[Obj],
    allocated_devices: Iterable[Sequence[str]] = (),
) -> list[dict[str, Any]] | None:
    """Allocate devices on ``node`` for all ``claims`` together, or find that they do not fit.

    ``classes`` are DeviceClass dicts (or a mapping name -> class), ``slices`` every
    ResourceSlice, ``allocated_devices`` the (driver, pool, device) triples already in use.
    Inputs are never mutated.

    Returns:
        One ``status.allocation`` dict per claim, in claim order
        (``{"devices": {"results": [...], "config": [...]}, "nodeSelector": {...}}``, keys
        omitted when empty/null), or None when the claims cannot all be allocated on the node.

    Raises:
        AllocationError: what upstream treats as an error (invalid CEL, unknown class, "All"
            on an incomplete pool, too many devices, empty constraint, "invalid resource pools
            were encountered", an unsupported feature, ...).

    >>> gpu = {"metadata": {"name": "gpu"}, "spec": {"selectors": [
    ...     {"cel": {"expression": "device.driver == 'gpu.example.com'"}}]}}
    >>> slice_ = {"metadata": {"name": "s"}, "spec": {"driver": "gpu.example.com",
    ...     "nodeName": "n1", "pool": {"name": "n1", "generation": 0, "resourceSliceCount": 1},
    ...     "devices": [{"name": "gpu-0"}]}}
    >>> claim = {"metadata": {"name": "c"}, "spec": {"devices": {"requests": [
    ...     {"name": "r", "exactly": {"deviceClassName": "gpu"}}]}}}
    >>> node = {"metadata": {"name": "n1"}}
    >>> allocate(node, [claim], classes=[gpu], slices=[slice_])[0]["devices"]["results"]
    [{'request': 'r', 'driver': 'gpu.example.com', 'pool': 'n1', 'device': 'gpu-0'}]
    """
    metadata = node.get("metadata") or {}
    pools = gather_pools(slices, str(metadata.get("name", "")), metadata.get("labels") or {})
    in_use: Container[tuple[str, ...]]
    if isinstance(allocated_devices, AbstractSet):
        in_use = allocated_devices  # already a set of tuples: no copy on the hot path
    else:
        in_use = {tuple(d) for d in allocated_devices}
    run = _Run(list(claims), _class_map(classes), pools, in_use)
    if not run.search():
        if any(pool.invalid for pool in pools):
            # Upstream wraps ErrFailedAllocationOnNode: a failure of this node only.
            raise AllocationError("invalid resource pools were encountered")
        return None
    return [run.result(index) for index in range(len(run.claims))]


def _class_map(classes: Iterable[Obj] | Mapping[str, Obj]) -> Mapping[str, Obj]:
    if isinstance(classes, Mapping):
        return classes
    return {str((c.get("metadata") or {}).get("name", "")): c for c in classes}


def _name(obj: Obj) -> str:
    return str((obj.get("metadata") or {}).get("name", ""))


def _kobj(obj: Obj) -> str:
    """``klog.KObj``: namespace/name, or just the name without a namespace."""
    metadata = obj.get("metadata") or {}
    namespace, name = metadata.get("namespace") or "", str(metadata.get("name", ""))
    return f"{namespace}/{name}" if namespace else name


@dataclass(slots=True, eq=False)
class _Request:
    claim_index: int
    name: str
    class_name: str
    device_class: Obj
    admin: bool
    # (who, index, expression) in evaluation order: class selectors, then request selectors.
    selectors: list[tuple[str, int, str]]
    all_mode: bool
    count: int = 0
    all_devices: list[Device] = field(default_factory=list)
    cache: dict[Device, bool] = field(default_factory=dict)


@dataclass(slots=True, eq=False)
class _MatchAttribute:
    """``matchAttribute``: every device in scope has the attribute, with one type and value."""

    requests: frozenset[str]
    attribute: str
    value: tuple[str | None, Any] = (None, None)
    count: int = 0

    def applies(self, request: str) -> bool:
        return not self.requests or request in self.requests

    def add(self, request: str, device: Device) -> bool:
        if not self.applies(request):
            return True
        found = _lookup_attribute(device, self.attribute)
        if found is None:
            return False
        value = _typed_value(found)
        if self.count == 0:
            self.value, self.count = value, 1
            return True
        if value[0] is None or value != self.value:
            return False
        self.count += 1
        return True

    def remove(self, request: str) -> None:
        if self.applies(request):
            self.count -= 1


def _lookup_attribute(device: Device, name: str) -> Obj | None:
    attributes = device.spec.get("attributes") or {}
    if name in attributes:
        return attributes[name]  # type: ignore[no-any-return]
    domain, sep, ident = name.partition("/")
    if sep and domain == device.id[0] and ident in attributes:
        return attributes[ident]  # type: ignore[no-any-return]
    return None


def _typed_value(attribute: Obj) -> tuple[str | None, Any]:
    # Upstream's switch order; versions compare as strings (semver requires minimal form).
    for kind in ("string", "int", "bool", "version"):
        if attribute.get(kind) is not None:
            return kind, attribute[kind]
    return None, None


class _Run:
    """State of one `allocate` call: validated requests, the search, and its results."""

    def __init__(
        self,
        claims: list[Obj],
        classes: Mapping[str, Obj],
        pools: list[Pool],
        in_use: Container[tuple[str, ...]],
    ) -> None:
        self.claims = claims
        self.classes = classes
        self.pools = pools
        self.in_use = in_use
        self.requests: list[list[_Request]] = []
        self.constraints: list[list[_MatchAttribute]] = []
        self.allocating: dict[DeviceID, set[int]] = {}
        self.picked: list[list[tuple[_Request, Device]]] = [[] for _ in claims]
        for index, claim in enumerate(claims):
            self._validate(index, claim)

    # --- validation (errors abort everything) ----------------------------------------------

    def _validate(self, index: int, claim: Obj) -> None:
        devices = (claim.get("spec") or {}).get("devices") or {}
        requests = [self._request(index, claim, r) for r in devices.get("requests") or ()]
        total = sum(len(r.all_devices) if r.all_mode else r.count for r in requests)
        if total > MAX_DEVICES_PER_CLAIM:
            raise AllocationError(
                f"claim {_kobj(claim)}: number of requested devices {total} exceeds the claim "
                f"limit of {MAX_DEVICES_PER_CLAIM}"
            )
        constraints = []
        for i, constraint in enumerate(devices.get("constraints") or ()):
            if constraint.get("matchAttribute"):
                names = frozenset(constraint.get("requests") or ())
                constraints.append(_MatchAttribute(names, str(constraint["matchAttribute"])))
            elif constraint.get("distinctAttribute"):
                raise AllocationError(
                    f"claim {_kobj(claim)}, constraint #{i}: distinctAttribute constraints are "
                    "not supported yet"
                )
            else:
                raise AllocationError(
                    f"claim {_kobj(claim)}, constraint #{i}: empty constraint (unsupported "
                    "constraint type?)"
                )
        self.requests.append(requests)
        self.constraints.append(constraints)

    def _request(self, index: int, claim: Obj, request: Obj) -> _Request:
        name = str(request.get("name", ""))
        where = f"claim {_kobj(claim)}, request {name}"
        if request.get("firstAvailable"):
            raise AllocationError(
                f"{where}: prioritized lists (firstAvailable) are not supported yet"
            )
        exactly = request.get("exactly") or {}
        for feature, label in (("capacity", "consumable capacity"), ("tolerations", "tolerations")):
            if exactly.get(feature):
                raise AllocationError(f"{where}: {label} ({feature}) are not supported yet")
        selectors = list(exactly.get("selectors") or ())
        for i, selector in enumerate(selectors):
            if selector.get("cel") is None:
                raise AllocationError(
                    f"{where}, selector #{i}: CEL expression empty (unsupported selector type?)"
                )
        class_name = str(exactly.get("deviceClassName") or "")
        if not class_name:
            raise AllocationError(f"{where}: missing device class name (unsupported request type?)")
        device_class = self.classes.get(class_name)
        if device_class is None:
            raise AllocationError(
                f"{where}: could not retrieve device class {class_name}: "
                f'deviceclass.resource.k8s.io "{class_name}" not found'
            )
        class_selectors = (device_class.get("spec") or {}).get("selectors") or ()
        req = _Request(
            claim_index=index,
            name=name,
            class_name=class_name,
            device_class=device_class,
            admin=bool(exactly.get("adminAccess")),
            selectors=[
                (f"class {class_name}", i, str((s.get("cel") or {}).get("expression", "")))
                for i, s in enumerate(class_selectors)
            ]
            + [
                (f"claim {_kobj(claim)}", i, str(s["cel"].get("expression", "")))
                for i, s in enumerate(selectors)
            ],
            all_mode=False,
        )
        mode = exactly.get("allocationMode") or "ExactCount"
        if mode == "ExactCount":
            count = exactly.get("count")
            req.count = 1 if count is None else int(count)
        elif mode == "All":
            req.all_mode = True
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
                req.all_devices.extend(d for d in pool.devices if self._selectable(req, d))
        else:
            raise AllocationError(f"{where}: unsupported count mode {mode}")
        return req

    # --- device eligibility ----------------------------------------------------------------

    def _selectable(self, req: _Request, device: Device) -> bool:
        cached = req.cache.get(device)
        if cached is not None:
            return cached
        result = not device.unselectable and all(
            self._matches(who, i, expression, device) for who, i, expression in req.selectors
        )
        req.cache[device] = result
        return result

    @staticmethod
    def _matches(who: str, index: int, expression: str, device: Device) -> bool:
        hit = device.matches.get(expression)
        if hit is not None:
            return hit
        try:
            program = cel.compile(expression)
        except AllocationError as exc:
            raise AllocationError(f"{who}: selector #{index}: CEL compile error: {exc}") from exc
        try:
            hit = cel.evaluate(program, device.activation())
        except AllocationError as exc:
            raise AllocationError(
                f"{who}: selector #{index} on device {'/'.join(device.id)}: CEL runtime error: "
                f"{exc}"
            ) from exc
        device.matches[expression] = hit
        return hit

    def _in_use(self, req: _Request, device: Device) -> bool:
        if req.admin:  # admin access only refuses a device this same claim already took
            return req.claim_index in self.allocating.get(device.id, ())
        return device.id in self.in_use or bool(self.allocating.get(device.id))

    # --- search ----------------------------------------------------------------------------

    def search(self) -> bool:
        """Depth-first search; True when every slot of every claim got a device."""
        slots: list[Any] = []
        for requests in self.requests:
            for req in requests:
                if req.all_mode and not req.all_devices:
                    slots.append((self._fail, req, None))
                elif req.all_mode:
                    slots.extend((self._all, req, d) for d in req.all_devices)
                else:
                    slots.extend((self._exact, req, None) for _ in range(req.count))
        # One generator per slot: each yields once per candidate it has taken, and undoes
        # that choice when resumed (backtracking). No recursion, so no depth limit.
        stack: list[Iterator[None]] = []
        level = 0
        while True:
            if level == len(slots):
                return True
            if len(stack) == level:
                fn, req, device = slots[level]
                stack.append(fn(req, device))
            if next(stack[level], False) is None:
                level += 1
                continue
            stack.pop()
            level -= 1
            if level < 0:
                return False

    @staticmethod
    def _fail(req: _Request, device: Device | None) -> Iterator[None]:
        return iter(())  # an "All" request without devices cannot be satisfied

    def _exact(self, req: _Request, _: Device | None) -> Iterator[None]:
        for pool in self.pools:
            if pool.incomplete or pool.invalid:
                continue
            for device in pool.devices:
                if self._in_use(req, device) or not self._selectable(req, device):
                    continue
                if device.blocked or not self._add_constraints(req, device, must=False):
                    continue
                self._take(req, device)
                yield None
                self._release(req, device)

    def _all(self, req: _Request, device: Device | None) -> Iterator[None]:
        assert device is not None
        if self._in_use(req, device) or device.blocked:
            return
        self._add_constraints(req, device, must=True)
        self._take(req, device)
        yield None
        self._release(req, device)

    def _add_constraints(self, req: _Request, device: Device, *, must: bool) -> bool:
        constraints = self.constraints[req.claim_index]
        for i, constraint in enumerate(constraints):
            if not constraint.add(req.name, device):
                if must:
                    raise AllocationError(
                        f"claim {_kobj(self.claims[req.claim_index])}, request {req.name}: cannot "
                        f"add device {'/'.join(device.id)} because a claim constraint would not "
                        "be satisfied"
                    )
                for previous in constraints[:i]:
                    previous.remove(req.name)
                return False
        return True

    def _take(self, req: _Request, device: Device) -> None:
        self.allocating.setdefault(device.id, set()).add(req.claim_index)
        self.picked[req.claim_index].append((req, device))

    def _release(self, req: _Request, device: Device) -> None:
        for constraint in self.constraints[req.claim_index]:
            constraint.remove(req.name)
        self.allocating[device.id].discard(req.claim_index)
        self.picked[req.claim_index].pop()

    # --- results ---------------------------------------------------------------------------

    def result(self, index: int) -> dict[str, Any]:
        """The ``status.allocation`` of claim ``index`` after a successful search."""
        results = []
        for req, device in self.picked[index]:
            entry: dict[str, Any] = {
                "request": req.name,
                "driver": device.id[0],
                "pool": device.id[1],
                "device": device.id[2],
            }
            if req.admin:
                entry["adminAccess"] = True
            results.append(entry)
        allocation: dict[str, Any] = {"devices": {"results": results}}
        config = self._config(index)
        if config:
            allocation["devices"]["config"] = config
        node_selector = self._node_selector(index)
        if node_selector is not None:
            allocation["nodeSelector"] = node_selector
        return allocation

    def _config(self, index: int) -> list[dict[str, Any]]:
        claim = self.claims[index]
        requests = self.requests[index]
        config: list[dict[str, Any]] = []
        by_class: dict[str, list[dict[str, Any]]] = {}
        for req in requests:
            entries = by_class.get(req.class_name)
            if entries is not None:  # each class config once; later requests join it
                for entry in entries:
                    entry["requests"].append(req.name)
                continue
            entries = []
            for item in (req.device_class.get("spec") or {}).get("config") or ():
                entry = {"source": "FromClass", "requests": [req.name], **_copy_config(item)}
                entries.append(entry)
            by_class[req.class_name] = entries
            config.extend(entries)
        names = [req.name for req in requests]
        devices = (claim.get("spec") or {}).get("devices") or {}
        for item in devices.get("config") or ():
            wanted = list(item.get("requests") or ())
            if wanted and not any(name in wanted for name in names):
                continue
            entry = {"source": "FromClaim", **({"requests": wanted} if wanted else {})}
            config.append({**entry, **_copy_config(item)})
        for entry in config:
            covered = entry.get("requests")
            if covered and all(name in covered for name in names):
                del entry["requests"]  # covers every request: empty means "all"
        return config

    def _node_selector(self, index: int) -> dict[str, Any] | None:
        fields: list[dict[str, Any]] = []
        expressions: list[dict[str, Any]] = []
        for _, device in self.picked[index]:
            info = device.slice
            if info.node_name:
                term = {"key": "metadata.name", "operator": "In", "values": [info.node_name]}
                return {"nodeSelectorTerms": [{"matchFields": [term]}]}
            if info.node_selector is None:
                continue
            terms = info.node_selector.get("nodeSelectorTerms") or ()
            if len(terms) > 1:
                raise AllocationError(
                    f"create NodeSelector for claim {_name(self.claims[index])}: "
                    f"unsupported ResourceSlice.NodeSelector with {len(terms)} terms"
                )
            for term in terms:
                _merge_requirements(term.get("matchFields") or (), fields)
                _merge_requirements(term.get("matchExpressions") or (), expressions)
        if not fields and not expressions:
            return None  # available everywhere
        term_out: dict[str, Any] = {}
        if expressions:
            term_out["matchExpressions"] = expressions
        if fields:
            term_out["matchFields"] = fields
        return {"nodeSelectorTerms": [term_out]}


def _copy_config(item: Obj) -> dict[str, Any]:
    return {k: copy.deepcopy(v) for k, v in item.items() if k not in ("requests", "source")}


def _merge_requirements(new: Iterable[Obj], into: list[dict[str, Any]]) -> None:
    for requirement in new:
        values = set(requirement.get("values") or ())
        if not any(
            old.get("key") == requirement.get("key")
            and old.get("operator") == requirement.get("operator")
            and set(old.get("values") or ()) == values
            for old in into
        ):
            into.append(copy.deepcopy(dict(requirement)))
