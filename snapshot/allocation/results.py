"""A claim's ``status.allocation`` from a successful search: results, config, node selector.

Follows the end of ``Allocate`` and ``createNodeSelector`` in
``internal/experimental/allocator_experimental.go`` (k8s.io/dynamic-resource-allocation):

- one result per device in allocation order, named ``<request>`` or
  ``<request>/<subrequest>``, with ``adminAccess`` (only when true), the request's
  ``tolerations``, the device's ``bindingConditions``/``bindingFailureConditions`` (with
  DRADeviceBindingConditions and DRAResourceClaimDeviceStatus), and for a shared device its
  ``shareID`` and ``consumedCapacity``;
- class config once per class (later requests of the class join its ``requests``), then the
  claim config that names one of the claim's (sub)requests or none; ``requests`` covering every
  request is cleared (empty means all);
- the node selector: the node itself when a device is node-local or binds to the node, else
  the union of the devices' node selectors (one term), else none.

Share IDs are UUIDs, as upstream's, but derived from the claim and the result instead of
random, so that the same run gives the same allocations.
"""

from __future__ import annotations

import copy
import uuid
from collections.abc import Iterable, Mapping
from typing import Any

from drasnap.snapshot.allocation.search import Search
from drasnap.snapshot.errors import AllocationError
from drasnap.snapshot.k8s.kinds import namespaced_key
from drasnap.snapshot.k8s.objects import raw_name

__all__ = ["allocation_result"]

Obj = Mapping[str, Any]
_SHARE_NAMESPACE = uuid.UUID("3f8a1f2e-6d0b-4b8e-9a57-2d7c1c0c5a11")


def allocation_result(search: Search, index: int) -> dict[str, Any]:
    """The ``status.allocation`` of claim ``index`` after a successful search."""
    claim = search.claims[index]
    binding = search.features.device_binding_and_status
    results = []
    for n, pick in enumerate(search.picks[index]):
        req, device = pick.request, pick.device
        device_id = device.id
        entry: dict[str, Any] = {
            "request": req.full_name,
            "driver": device_id[0],
            "pool": device_id[1],
            "device": device_id[2],
        }
        if req.admin:
            entry["adminAccess"] = True
        if req.tolerations:
            entry["tolerations"] = copy.deepcopy(list(req.tolerations))
        if binding and device.binding:
            for key in ("bindingConditions", "bindingFailureConditions"):
                values = device.spec.get(key)
                if values:
                    entry[key] = list(values)
        if pick.shared:
            entry["shareID"] = _share_id(claim, n, device_id)
        if pick.consumed:
            entry["consumedCapacity"] = {name: a.render() for name, a in pick.consumed.items()}
        results.append(entry)
    allocation: dict[str, Any] = {"devices": {"results": results}}
    config = _config(search, index)
    if config:
        allocation["devices"]["config"] = config
    node_selector = _node_selector(search, index)
    if node_selector is not None:
        allocation["nodeSelector"] = node_selector
    return allocation


def _share_id(claim: Obj, n: int, device: tuple[str, str, str]) -> str:
    metadata = claim.get("metadata") or {}
    owner = metadata.get("uid") or namespaced_key(metadata.get("namespace", ""), raw_name(claim))
    return str(uuid.uuid5(_SHARE_NAMESPACE, f"{owner}\n{n}\n{'/'.join(device)}"))


def _config(search: Search, index: int) -> list[dict[str, Any]]:
    plan = search.plans[index]
    devices = (plan.claim.get("spec") or {}).get("devices") or {}
    if not devices.get("config"):
        for slot in plan.slots:
            for req in slot.alternatives:
                if (req.device_class.get("spec") or {}).get("config"):
                    break
            else:
                continue
            break
        else:
            return []  # neither the claim nor its classes have config
    chosen = [
        slot.alternatives[search.selected[index][ri] if slot.prioritized else 0]
        for ri, slot in enumerate(plan.slots)
    ]
    config: list[dict[str, Any]] = []
    by_class: dict[str, list[dict[str, Any]]] = {}
    for req in chosen:
        entries = by_class.get(req.class_name)
        if entries is not None:  # each class config once; later requests join it
            for entry in entries:
                entry["requests"].append(req.full_name)
            continue
        entries = []
        for item in (req.device_class.get("spec") or {}).get("config") or ():
            entries.append({"source": "FromClass", "requests": [req.full_name], **_copy(item)})
        by_class[req.class_name] = entries
        config.extend(entries)
    # A claim config entry names requests, or subrequests as "<request>/<subrequest>".
    names = [(req.base_name, req.full_name) for req in chosen]
    for item in devices.get("config") or ():
        wanted = list(item.get("requests") or ())
        if wanted and not any(base in wanted or full in wanted for base, full in names):
            continue
        entry = {"source": "FromClaim", **({"requests": wanted} if wanted else {})}
        config.append({**entry, **_copy(item)})
    for entry in config:
        covered = entry.get("requests")
        if covered and all(base in covered or full in covered for base, full in names):
            del entry["requests"]  # covers every request: empty means "all"
    return config


def _copy(item: Obj) -> dict[str, Any]:
    return {k: copy.deepcopy(v) for k, v in item.items() if k not in ("requests", "source")}


def _node_selector(search: Search, index: int) -> dict[str, Any] | None:
    fields: list[dict[str, Any]] = []
    expressions: list[dict[str, Any]] = []
    for pick in search.picks[index]:
        device = pick.device
        info = device.slice
        if info.per_device:
            node_name = device.spec.get("nodeName")
            selector = device.spec.get("nodeSelector")
        else:
            node_name, selector = info.node_name, info.node_selector
        if node_name or device.spec.get("bindsToNode"):
            term = {"key": "metadata.name", "operator": "In", "values": [search.node_name]}
            return {"nodeSelectorTerms": [{"matchFields": [term]}]}
        if selector is None:
            continue
        terms = selector.get("nodeSelectorTerms") or ()
        if len(terms) > 1:
            name = raw_name(search.claims[index])
            raise AllocationError(
                f"create NodeSelector for claim {name}: unsupported ResourceSlice.NodeSelector "
                f"with {len(terms)} terms"
            )
        for term in terms:
            _merge(term.get("matchFields") or (), fields)
            _merge(term.get("matchExpressions") or (), expressions)
    if not fields and not expressions:
        return None  # available everywhere
    term_out: dict[str, Any] = {}
    if expressions:
        term_out["matchExpressions"] = expressions
    if fields:
        term_out["matchFields"] = fields
    return {"nodeSelectorTerms": [term_out]}


def _merge(new: Iterable[Obj], into: list[dict[str, Any]]) -> None:
    for requirement in new:
        values = set(requirement.get("values") or ())
        if not any(
            old.get("key") == requirement.get("key")
            and old.get("operator") == requirement.get("operator")
            and set(old.get("values") or ()) == values
            for old in into
        ):
            into.append(copy.deepcopy(dict(requirement)))
