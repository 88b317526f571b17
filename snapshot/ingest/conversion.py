"""``resource.k8s.io`` objects of every version Kubernetes 1.36 serves, converted to ``v1``.

The API server stores DRA objects in one version and converts what clients send
(``pkg/apis/resource/<version>/conversion.go`` and the generated conversions). drasnap holds
``v1`` only, so objects written for older versions (driver quickstarts, older clusters' dumps)
are converted here the same way:

- ``v1beta2`` (ResourceClaim, ResourceClaimTemplate, ResourceSlice, DeviceClass,
  DeviceTaintRule) and ``v1alpha3`` (DeviceTaintRule): the same shape as ``v1`` field for
  field (upstream converts them with generated code only;
  ``tests/snapshot/ingest/test_conversion.py``
  compares the client models), so only ``apiVersion`` changes;
- ``v1beta1`` (``pkg/apis/resource/v1beta1/conversion.go``):

  * a request's ``deviceClassName``, ``selectors``, ``allocationMode``, ``count``,
    ``adminAccess``, ``tolerations``, ``capacity`` and ``derivedAttributes`` move into
    ``exactly`` when any of them is set (``hasAnyMainRequestFieldsSet``: ``count: 0`` and
    ``allocationMode: ""`` are unset, an empty ``selectors`` list is set); ``name`` and
    ``firstAvailable`` (whose subrequests have v1's shape) stay;
  * a device's ``basic`` is flattened: its fields become the device's;
  * a slice's ``nodeName: ""`` and ``allNodes: false`` are unset (v1 makes them optional);
  * everything else (claim status, classes, counters, taints) has v1's shape.

Defaults are not applied, exactly as for ``v1`` objects (the allocator reads a missing
``count`` as 1). The v1beta1 object is first checked with the ``V1beta1*`` client models, so
type errors and unknown fields name v1beta1 paths; what is checked after the conversion
(names, :mod:`snapshot.validation.names`) is reported at the path of the v1beta1 document too
(``spec.devices[0].basic.attributes...``). Each conversion adds one note,
``resource.k8s.io/v1beta1 converted to resource.k8s.io/v1``.

Versions Kubernetes 1.36 no longer serves (``v1alpha3`` claims, slices, classes and
templates, ``v1alpha2``) are refused, naming the versions it serves.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from drasnap.snapshot.errors import ObjectValidationError
from drasnap.snapshot.k8s.kinds import (
    CLAIM_KIND,
    CLAIM_TEMPLATE_KIND,
    CLASS_KIND,
    DRA_API_VERSION,
    DRA_GROUP,
    SLICE_KIND,
    TAINT_RULE_KIND,
    is_namespaced,
)
from drasnap.snapshot.k8s.objects import KubeObject, format_label, identity_of, quote
from drasnap.snapshot.validation import validate
from drasnap.snapshot.validation.context import FieldPath
from drasnap.snapshot.validation.engine import check
from drasnap.snapshot.validation.models import (
    DRA_V1ALPHA3,
    DRA_V1BETA1,
    DRA_V1BETA2,
    V1BETA1_MODEL_NAMES,
    client_model,
)

__all__ = ["SERVED_VERSIONS", "convert_to_v1", "is_dra_object"]

_FOUR_KINDS_VERSIONS: Final = (DRA_API_VERSION, DRA_V1BETA2, DRA_V1BETA1)
SERVED_VERSIONS: Final[dict[str, tuple[str, ...]]] = {
    CLAIM_KIND: _FOUR_KINDS_VERSIONS,
    CLAIM_TEMPLATE_KIND: _FOUR_KINDS_VERSIONS,
    SLICE_KIND: _FOUR_KINDS_VERSIONS,
    CLASS_KIND: _FOUR_KINDS_VERSIONS,
    TAINT_RULE_KIND: (DRA_API_VERSION, DRA_V1BETA2, DRA_V1ALPHA3),
}
"""The ``resource.k8s.io`` versions drasnap reads, per kind: what Kubernetes 1.36 serves
(``v1`` DeviceTaintRule is 1.37's, whose shape it has)."""

# The fields of a v1beta1 DeviceRequest that v1 keeps in ExactDeviceRequest.
_EXACT_FIELDS: Final = (
    "deviceClassName",
    "selectors",
    "allocationMode",
    "count",
    "adminAccess",
    "tolerations",
    "capacity",
    "derivedAttributes",
)


def is_dra_object(obj: object) -> bool:
    """Whether ``obj`` is a mapping whose ``apiVersion`` is in the ``resource.k8s.io`` group."""
    if not isinstance(obj, Mapping):
        return False
    api_version = obj.get("apiVersion")
    return isinstance(api_version, str) and api_version.startswith(DRA_GROUP + "/")


def convert_to_v1(
    obj: object, *, source: str | None = None, warnings: list[str] | None = None
) -> KubeObject:
    """Validate a ``resource.k8s.io`` object of a served version and return its v1 form.

    ``v1`` and ``v1beta2`` objects are validated as by :func:`snapshot.validation.validate`;
    ``v1beta1`` objects are checked with their own models, converted (module docstring) and
    validated as v1. Notes (one for the conversion, and the normalisations) are appended to
    ``warnings``. The input is never mutated.

    Raises:
        ObjectValidationError: the object is invalid, or its version is not served, naming
            the versions that are.
    """
    if not isinstance(obj, Mapping):
        return validate(obj, source=source, warnings=warnings)
    api_version, kind = obj.get("apiVersion"), obj.get("kind")
    served = SERVED_VERSIONS.get(kind) if isinstance(kind, str) else None
    if served is not None and api_version not in served:
        _, namespace, name = identity_of(obj)
        namespace = namespace if is_namespaced(kind) else None
        prefix = ": ".join(
            p for p in (source, format_label(str(kind), namespace, name)) if p
        )  # fmt: skip
        shown = quote(api_version) if isinstance(api_version, str) else "null"
        raise ObjectValidationError(
            f"{prefix}: apiVersion: Kubernetes 1.36 does not serve {kind} in {shown}; it "
            f"serves {', '.join(served)}",
            source=source,
            kind=str(kind),
            namespace=namespace,
            name=name,
            field="apiVersion",
        )
    if api_version != DRA_V1BETA1 or not isinstance(kind, str):
        return validate(obj, source=source, warnings=warnings)
    notes: list[str] = []
    beta = check(
        obj,
        source,
        notes,
        build_model=False,
        model=client_model(V1BETA1_MODEL_NAMES[kind]),
        names=False,
    ).obj
    converted = _v1beta1_to_v1(beta)
    ours = check(converted, source, notes, build_model=False, view=_v1beta1_path).obj
    notes.append(
        ": ".join(p for p in (source, format_label(kind, *identity_of(ours)[1:])) if p)
        + f": {DRA_V1BETA1} converted to {DRA_API_VERSION}"
    )
    if warnings is not None:
        warnings.extend(notes)
    return ours


def _v1beta1_to_v1(obj: KubeObject) -> KubeObject:
    """The v1 form of a checked v1beta1 object (a new dict; shared subtrees are not mutated)."""
    out = dict(obj)
    out["apiVersion"] = DRA_API_VERSION
    kind = obj["kind"]
    spec = obj.get("spec")
    if not isinstance(spec, dict):
        return out
    if kind == SLICE_KIND:
        out["spec"] = _slice_spec(spec)
    elif kind == CLAIM_KIND:
        out["spec"] = _claim_spec(spec)
    elif kind == CLAIM_TEMPLATE_KIND and isinstance(spec.get("spec"), dict):
        out["spec"] = {**spec, "spec": _claim_spec(spec["spec"])}
    return out


def _slice_spec(spec: dict[str, Any]) -> dict[str, Any]:
    out = dict(spec)
    # v1beta1's plain string and bool are pointers in v1: the zero value means unset.
    if out.get("nodeName") == "":
        del out["nodeName"]
    if out.get("allNodes") is False:
        del out["allNodes"]
    if isinstance(spec.get("devices"), list):
        out["devices"] = [_device(device) for device in spec["devices"]]
    return out


def _device(device: Any) -> Any:
    if not isinstance(device, dict) or "basic" not in device:
        return device
    out = {k: v for k, v in device.items() if k != "basic"}
    basic = device["basic"]
    if isinstance(basic, dict):
        # Upstream copies attributes and capacity only when non-empty.
        out.update(
            (k, v) for k, v in basic.items() if not (k in ("attributes", "capacity") and not v)
        )
    return out


def _claim_spec(spec: dict[str, Any]) -> dict[str, Any]:
    devices = spec.get("devices")
    if not isinstance(devices, dict) or not isinstance(devices.get("requests"), list):
        return spec
    return {**spec, "devices": {**devices, "requests": [_request(r) for r in devices["requests"]]}}


def _request(request: Any) -> Any:
    if not isinstance(request, dict):
        return request
    out = {k: v for k, v in request.items() if k not in _EXACT_FIELDS}
    exactly = {k: request[k] for k in _EXACT_FIELDS if k in request}
    if exactly.get("count") == 0:
        del exactly["count"]
    if exactly.get("allocationMode") == "":
        del exactly["allocationMode"]
    if exactly:
        out["exactly"] = exactly
    return out


def _v1beta1_path(path: FieldPath) -> FieldPath:
    """Where a field of the converted object is in the v1beta1 document (the reverse of
    upstream's ``ResourceNormalizationRules``)."""
    n = len(path)
    # spec.devices[i].<field> of a slice -> spec.devices[i].basic.<field>
    if n >= 4 and path[:2] == ("spec", "devices") and isinstance(path[2], int):
        if path[3] != "name":
            return (*path[:3], "basic", *path[3:])
        return path
    # (spec.)spec.devices.requests[i].exactly.<field> -> ...requests[i].<field>
    for start in (("spec", "devices", "requests"), ("spec", "spec", "devices", "requests")):
        k = len(start)
        if n > k + 1 and path[:k] == start and path[k + 1] == "exactly":
            return (*path[: k + 1], *path[k + 2 :])
    return path
