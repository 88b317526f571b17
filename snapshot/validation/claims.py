"""Claims, claim templates and device classes, checked as the API server of Kubernetes 1.36 does.

Upstream (``pkg/apis/resource/validation/validation.go``): ``validateDeviceClaim``,
``validateDeviceRequest``, ``validateExactDeviceRequest``, ``validateDeviceSubRequest``,
``validateDeviceAllocationMode``, ``validateSelector``/``validateCELSelector``,
``validateDeviceConstraint``, ``validateDeviceClaimConfiguration``,
``validateOpaqueConfiguration``/``validateRawExtension``, ``validateDeviceClassSpec`` and, for a
claim's status (as the scheduler writes it), ``validateResourceClaimStatusUpdate``,
``validateAllocationResult`` and ``validateDeviceRequestAllocationResult``. Names and request
references are :mod:`snapshot.validation.names`'; every rule and whether drasnap checks it:
``docs/validation.md``.

Before validating, the API server defaults ``allocationMode`` to ``ExactCount`` and, in that
mode, a ``count`` of 0 (or none) to 1 (``SetDefaults_ExactDeviceRequest``): `apply_defaults`
does the same to a count written as 0.

One rule here is not the API server's but the allocator's, checked up front because a run
would hit it on every node: an unallocated claim (or a template) whose requests ask for more
than ``ALLOCATION_RESULTS_MAX_SIZE`` devices in all (``number of requested devices N exceeds
the claim limit of 32``, ``Allocate`` in ``structured/internal/experimental``). Requests with
``allocationMode: All`` count as none here: how many devices they take is known only at
allocation, where the allocator checks again.
"""

from __future__ import annotations

import re
import uuid
from collections.abc import Mapping
from typing import Any, Final

import orjson
from drasnap.snapshot.errors import AllocationError
from drasnap.snapshot.validation.context import FieldPath
from drasnap.snapshot.validation.core import check_node_selector
from drasnap.snapshot.validation.formats import label_key
from drasnap.snapshot.validation.limits import (
    ALLOCATION_RESULTS_MAX_SIZE,
    CEL_SELECTOR_EXPRESSION_MAX_LENGTH,
    DEVICE_CONFIG_MAX_SIZE,
    DEVICE_CONSTRAINTS_MAX_SIZE,
    DEVICE_REQUESTS_MAX_SIZE,
    DEVICE_SELECTORS_MAX_SIZE,
    FIRST_AVAILABLE_DEVICE_REQUEST_MAX_SIZE,
    OPAQUE_PARAMETERS_MAX_LENGTH,
    RESOURCE_CLAIM_RESERVED_FOR_MAX_SIZE,
)
from drasnap.snapshot.validation.problems import Checker, as_list, as_map
from drasnap.snapshot.validation.slices import check_binding_conditions

__all__ = ["apply_defaults", "check_claim", "check_device_class", "check_template"]

_MODES: Final = ("All", "ExactCount")
_CONFIG_SOURCES: Final = ("FromClaim", "FromClass")
_UUID_RE: Final = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")
# The lengths google/uuid parses: plain, hyphenated, braced, urn:uuid: prefixed.
_UUID_LENGTHS: Final = frozenset({32, 36, 38, 45})


def _requests_of(spec: Mapping[str, Any]) -> list[Any]:
    return as_list(as_map(spec.get("devices")).get("requests"))


def _exact_requests(spec: Mapping[str, Any]) -> list[tuple[FieldPath, dict[str, Any]]]:
    """(path, request) of every ``exactly`` request and every subrequest of ``spec``."""
    found: list[tuple[FieldPath, dict[str, Any]]] = []
    for index, request in enumerate(_requests_of(spec)):
        request = as_map(request)
        exactly = request.get("exactly")
        if type(exactly) is dict:
            found.append((("devices", "requests", index, "exactly"), exactly))
        for sub_index, sub in enumerate(as_list(request.get("firstAvailable"))):
            if type(sub) is dict:
                found.append((("devices", "requests", index, "firstAvailable", sub_index), sub))
    return found


def apply_defaults(obj: dict[str, Any]) -> list[FieldPath]:
    """Set ``count: 0`` of an ExactCount request to 1, as the API server's defaulting does;
    the paths changed (``obj`` is the engine's own copy)."""
    kind = obj.get("kind")
    prefix: FieldPath
    if kind == "ResourceClaim":
        spec, prefix = as_map(obj.get("spec")), ("spec",)
    elif kind == "ResourceClaimTemplate":
        spec, prefix = as_map(as_map(obj.get("spec")).get("spec")), ("spec", "spec")
    else:
        return []
    changed: list[FieldPath] = []
    for path, request in _exact_requests(spec):
        mode = request.get("allocationMode") or "ExactCount"
        if mode == "ExactCount" and type(request.get("count")) is int and request["count"] == 0:
            request["count"] = 1
            changed.append((*prefix, *path, "count"))
    return changed


# -- claims and templates ---------------------------------------------------------------------


def check_claim(c: Checker, obj: Mapping[str, Any]) -> None:
    spec = as_map(obj.get("spec"))
    _claim_spec(c, ("spec",), spec)
    status = as_map(obj.get("status"))
    _status(c, status, spec)
    if status.get("allocation") is None:
        _claim_limit(c, ("spec",), spec)


def check_template(c: Checker, obj: Mapping[str, Any]) -> None:
    spec = as_map(as_map(obj.get("spec")).get("spec"))
    _claim_spec(c, ("spec", "spec"), spec)
    _claim_limit(c, ("spec", "spec"), spec)


def _claim_spec(c: Checker, path: FieldPath, spec: Mapping[str, Any]) -> None:
    """``validateDeviceClaim``."""
    devices = as_map(spec.get("devices"))
    dpath = (*path, "devices")
    requests = as_list(devices.get("requests"))
    if not c.too_many((*dpath, "requests"), requests, DEVICE_REQUESTS_MAX_SIZE):
        for index, request in enumerate(requests):
            _request(c, (*dpath, "requests", index), as_map(request))
    constraints = as_list(devices.get("constraints"))
    if not c.too_many((*dpath, "constraints"), constraints, DEVICE_CONSTRAINTS_MAX_SIZE):
        for index, constraint in enumerate(constraints):
            constraint = as_map(constraint)
            cpath = (*dpath, "constraints", index)
            _request_list(c, (*cpath, "requests"), constraint.get("requests"))
            if constraint.get("matchAttribute") is None and (
                constraint.get("distinctAttribute") is None
            ):
                # DRAConsumableCapacity (on by default in 1.36) words it this way.
                c.missing(
                    cpath,
                    'exactly one of "matchAttribute" or "distinctAttribute" is required, but '
                    "multiple fields are set",
                )
    configs = as_list(devices.get("config"))
    if not c.too_many((*dpath, "config"), configs, DEVICE_CONFIG_MAX_SIZE):
        for index, config in enumerate(configs):
            config = as_map(config)
            cpath = (*dpath, "config", index)
            _request_list(c, (*cpath, "requests"), config.get("requests"))
            _opaque(c, cpath, config)


def _request_list(c: Checker, path: FieldPath, refs: Any) -> None:
    """The ``requests`` of a constraint or config: a set of at most 32 (the references
    themselves: :mod:`snapshot.validation.names`)."""
    if not c.too_many(path, refs, DEVICE_REQUESTS_MAX_SIZE):
        c.unique(path, as_list(refs), None)


def _request(c: Checker, path: FieldPath, request: Mapping[str, Any]) -> None:
    """``validateDeviceRequest`` past its one-of rule (:mod:`snapshot.validation.names`)."""
    subrequests = as_list(request.get("firstAvailable"))
    exactly = request.get("exactly")
    if subrequests and exactly is None:
        spath = (*path, "firstAvailable")
        if not c.too_many(spath, subrequests, FIRST_AVAILABLE_DEVICE_REQUEST_MAX_SIZE):
            for index, sub in enumerate(subrequests):
                _exact(c, (*spath, index), as_map(sub))
    elif type(exactly) is dict and not subrequests:
        _exact(c, (*path, "exactly"), exactly)


def _exact(c: Checker, path: FieldPath, request: Mapping[str, Any]) -> None:
    """An ``exactly`` request or a subrequest: selectors and ``validateDeviceAllocationMode``
    (the class name and tolerations: :mod:`snapshot.validation.names`)."""
    check_selectors(c, (*path, "selectors"), request.get("selectors"))
    mode = request.get("allocationMode") or "ExactCount"  # the API server's default
    count = request.get("count")
    if mode == "All":
        if count not in (None, 0):
            c.invalid((*path, "count"), count, "must not be specified when allocationMode is 'All'")
    elif mode == "ExactCount":
        if isinstance(count, int) and count <= 0:
            c.invalid((*path, "count"), count, "must be greater than zero")
    else:
        c.one_of((*path, "allocationMode"), mode, _MODES)


def check_selectors(c: Checker, path: FieldPath, selectors: Any) -> None:
    """``validateSelector`` of each CEL selector: present, at most 10 KiB, compiles.

    The expression is compiled by drasnap's CEL environment with the list-typed attributes
    (DRAListTypeAttributes) declared: what compiles under some feature gates passes here, and
    the allocator compiles again under the run's gates. No cost limit is estimated.
    """
    if c.too_many(path, selectors, DEVICE_SELECTORS_MAX_SIZE):
        return
    for index, selector in enumerate(as_list(selectors)):
        cel = as_map(selector).get("cel")
        if type(cel) is not dict:
            c.missing((*path, index, "cel"))
            continue
        expression = cel.get("expression")
        epath = (*path, index, "cel", "expression")
        if not isinstance(expression, str):
            continue
        if len(expression.encode()) > CEL_SELECTOR_EXPRESSION_MAX_LENGTH:
            c.too_long(epath, CEL_SELECTOR_EXPRESSION_MAX_LENGTH)
            continue
        problem = _compile_problem(expression)
        if problem is not None:
            c.invalid(epath, expression, problem)


def _compile_problem(expression: str) -> str | None:
    # Imported here: the CEL engine is loaded only when some object has a selector.
    from drasnap.snapshot.cel.engine import compile as compile_cel

    try:
        compile_cel(expression, list_type_attributes=True)
    except AllocationError as exc:
        # The compiler goes on with the expression and a caret under the error: the first
        # line says it all.
        return str(exc).splitlines()[0]
    return None


def _opaque(c: Checker, path: FieldPath, config: Mapping[str, Any]) -> None:
    """``validateDeviceConfiguration``: an ``opaque`` configuration whose parameters are one
    JSON object of at most 10 KiB (its driver name: :mod:`snapshot.validation.names`)."""
    opaque = config.get("opaque")
    if type(opaque) is not dict:
        c.missing((*path, "opaque"))
        return
    ppath = (*path, "opaque", "parameters")
    if "parameters" not in opaque:
        c.missing(ppath)
        return
    parameters = opaque["parameters"]
    if len(orjson.dumps(parameters)) > OPAQUE_PARAMETERS_MAX_LENGTH:
        c.too_long(ppath, OPAQUE_PARAMETERS_MAX_LENGTH)
    elif type(parameters) is not dict:
        c.invalid(ppath, "<value omitted>", "must be a valid JSON object")


def _claim_limit(c: Checker, path: FieldPath, spec: Mapping[str, Any]) -> None:
    """The allocator's limit of devices per claim, found before the run (module docstring)."""
    requests = _requests_of(spec)
    if len(requests) > DEVICE_REQUESTS_MAX_SIZE:
        return  # reported as too many requests
    total = 0
    biggest: tuple[int, FieldPath] = (0, ())
    for index, request in enumerate(requests):
        request = as_map(request)
        rpath = (*path, "devices", "requests", index)
        subrequests = [as_map(s) for s in as_list(request.get("firstAvailable"))]
        if subrequests:
            size = min(_size(sub) for sub in subrequests)
            where: FieldPath = (*rpath, "firstAvailable")
        else:
            size = _size(as_map(request.get("exactly")))
            where = (*rpath, "exactly", "count")
        total += size
        biggest = max(biggest, (size, where))
    if total <= ALLOCATION_RESULTS_MAX_SIZE:
        return
    # One request over the limit on its own is named; else the requests together.
    size, where = biggest
    if size <= ALLOCATION_RESULTS_MAX_SIZE:
        size, where = total, (*path, "devices", "requests")
    c.invalid(
        where,
        size,
        f"number of requested devices {total} exceeds the claim limit of "
        f"{ALLOCATION_RESULTS_MAX_SIZE} (the limit of Kubernetes' allocator: the API server "
        "accepts this claim, but the scheduler can allocate it on no node)",
    )


def _size(request: Mapping[str, Any]) -> int:
    if (request.get("allocationMode") or "ExactCount") != "ExactCount":
        return 0
    count = request.get("count")
    return count if isinstance(count, int) and count > 0 else 1


# -- a claim's status -------------------------------------------------------------------------


def _status(c: Checker, status: Mapping[str, Any], spec: Mapping[str, Any]) -> None:
    """``validateResourceClaimStatusUpdate`` for a status as the scheduler writes it."""
    reserved = as_list(status.get("reservedFor"))
    rpath = ("status", "reservedFor")
    if not c.too_many(rpath, reserved, RESOURCE_CLAIM_RESERVED_FOR_MAX_SIZE):
        for index, ref in enumerate(reserved):
            ref = as_map(ref)
            for field_name in ("resource", "name", "uid"):
                if not ref.get(field_name):
                    c.missing((*rpath, index, field_name))
        c.unique(rpath, reserved, "uid")
    allocation = status.get("allocation")
    if reserved and allocation is None:
        c.forbidden(rpath, "may not be specified when `allocated` is not set")
    if type(allocation) is not dict:
        return
    apath = ("status", "allocation")
    devices = as_map(allocation.get("devices"))
    results = as_list(devices.get("results"))
    if not c.too_many((*apath, "devices", "results"), results, ALLOCATION_RESULTS_MAX_SIZE):
        for index, result in enumerate(results):
            result = as_map(result)
            path = (*apath, "devices", "results", index)
            check_binding_conditions(c, path, result)
            share_id = result.get("shareID")
            if isinstance(share_id, str):
                _uid(c, (*path, "shareID"), share_id)
    configs = as_list(devices.get("config"))
    if not c.too_many((*apath, "devices", "config"), configs, 2 * DEVICE_CONFIG_MAX_SIZE):
        for index, config in enumerate(configs):
            config = as_map(config)
            path = (*apath, "devices", "config", index)
            source = config.get("source")
            if not source:
                c.missing((*path, "source"))
            else:
                c.one_of((*path, "source"), source, _CONFIG_SOURCES)
            _request_list(c, (*path, "requests"), config.get("requests"))
            _opaque(c, path, config)
    selector = allocation.get("nodeSelector")
    if type(selector) is dict:
        check_node_selector(c, (*apath, "nodeSelector"), selector)


def _uid(c: Checker, path: FieldPath, uid: str) -> None:
    """``validateUID``: google/uuid's parse, then the lowercase hyphenated form."""
    if _UUID_RE.fullmatch(uid):
        return
    if len(uid) not in _UUID_LENGTHS:
        c.invalid(path, uid, f"error validating uid: invalid UUID length: {len(uid)}")
        return
    try:
        uuid.UUID(uid)
    except ValueError:
        c.invalid(path, uid, "error validating uid: invalid UUID format")
        return
    c.invalid(
        path,
        uid,
        "uid must be in RFC 4122 normalized form, `xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx` with "
        "lowercase hexadecimal characters",
    )


# -- device classes ---------------------------------------------------------------------------


def check_device_class(c: Checker, obj: Mapping[str, Any]) -> None:
    """``validateDeviceClassSpec``."""
    spec = as_map(obj.get("spec"))
    check_selectors(c, ("spec", "selectors"), spec.get("selectors"))
    configs = as_list(spec.get("config"))
    if not c.too_many(("spec", "config"), configs, DEVICE_CONFIG_MAX_SIZE):
        for index, config in enumerate(configs):
            _opaque(c, ("spec", "config", index), as_map(config))
    name = spec.get("extendedResourceName")
    if isinstance(name, str) and not _is_extended_resource_name(name):
        c.invalid(("spec", "extendedResourceName"), name, "must be a valid extended resource name")


def _is_extended_resource_name(name: str) -> bool:
    """``v1helper.IsExtendedResourceName``: a domain-prefixed name outside ``kubernetes.io/``
    and not ``requests.``-prefixed, which stays a qualified name behind ``requests.``."""
    if "/" not in name or "kubernetes.io/" in name or name.startswith("requests."):
        return False
    return not label_key(f"requests.{name}")
