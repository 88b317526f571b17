"""Names the API server would reject, refused with their wire path and the API server's words.

The client models check types only; the API server also checks the format of every name
(``pkg/apis/resource/validation/validation.go`` for the DRA kinds, ``ValidateObjectMeta``
and the pod validation in ``pkg/apis/core/validation/validation.go``). drasnap keys its
indexes and its allocations on these names, so one that Kubernetes would never store
(``Bad_Name``) is refused here, before anything is written.

Which rule each field follows (upstream's ``validate*Name`` helpers):

====================================================  ==========================================
field                                                 rule
====================================================  ==========================================
``metadata.name`` of every kind                       DNS subdomain
``metadata.namespace``                                DNS label
``metadata.labels`` keys / values                     label key (qualified name) / label value
slice ``spec.driver``, config ``opaque.driver``,      driver name: at most 63 characters, a DNS
result and taint-selector ``driver``                  subdomain once lowercased
slice ``spec.pool.name``, result ``pool``,            pool name: at most 253 characters, each
taint-selector ``pool``                               ``/``-separated part a DNS subdomain
slice ``spec.nodeName``, pod ``spec.nodeName``        DNS subdomain, and not ``""`` in a slice
device ``name``, result ``device``, selector          DNS label, unique in its slice
``device``
attribute and capacity names                          C identifier (at most 32 characters), or
                                                      ``driver-name/C identifier``
``sharedCounters[].name``, counter names,             DNS label
``consumesCounters[].counterSet``
taint and toleration ``key`` / ``value``              label key / label value
taint ``effect``, toleration ``effect`` /             one of ``NoSchedule``, ``NoExecute``,
``operator``                                          ``None`` / ``Exists``, ``Equal``
request and subrequest ``name``                       DNS label, unique in the claim (request)
                                                      or in the request (subrequest)
``deviceClassName``                                   DNS subdomain, required
constraint and config ``requests[]``, result          a request of the claim, or
``request``                                           ``request/subrequest``
``matchAttribute``, ``distinctAttribute``             ``domain/C identifier``
pod ``spec.resourceClaims[].name``                    DNS label
pod ``resourceClaimName`` / ``resourceClaimTemplate   DNS subdomain
Name``
====================================================  ==========================================

Also the API server's one-of rules these names hang on: a request has ``exactly`` or
``firstAvailable``, and a slice exactly one of ``nodeName``, ``nodeSelector``, ``allNodes`` and
``perDeviceNodeSelection``.

Messages are the API server's: ``spec.devices[0].name: Invalid value: "Bad_Name": a lowercase
RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end
with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is
'[a-z0-9]([-a-z0-9]*[a-z0-9])?')`` (the double space is upstream's). `collect_names` adds them
to the checker of :mod:`snapshot.validation.api`, which raises the first.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Final

from drasnap.snapshot.k8s.kinds import (
    CLAIM_KIND,
    CLAIM_TEMPLATE_KIND,
    CLASS_KIND,
    POD_KIND,
    SLICE_KIND,
    TAINT_RULE_KIND,
)
from drasnap.snapshot.k8s.objects import go_quote
from drasnap.snapshot.validation.context import FieldPath
from drasnap.snapshot.validation.formats import dns_label, dns_subdomain, label_key
from drasnap.snapshot.validation.problems import Checker, as_list, as_map, invalid

__all__ = ["collect_names"]

_TAINT_EFFECTS: Final = ("NoExecute", "NoSchedule", "None")
# A device attribute holds exactly one of these (the list forms behind DRAListTypeAttributes).
_ATTRIBUTE_VALUES: Final = frozenset(
    {"bool", "int", "string", "version", "bools", "ints", "strings", "versions"}
)
_TOLERATION_OPERATORS: Final = ("Equal", "Exists")
_ONE_REQUEST_TYPE: Final = "exactly one of `exactly` or `firstAvailable` is required"

# -- per kind -------------------------------------------------------------------------------


def _metadata(c: Checker, obj: Mapping[str, Any]) -> None:
    metadata = as_map(obj.get("metadata"))
    name = metadata.get("name")
    if isinstance(name, str) and name:
        c.each(("metadata", "name"), name, dns_subdomain(name))
    namespace = metadata.get("namespace")
    if isinstance(namespace, str) and namespace:
        c.each(("metadata", "namespace"), namespace, dns_label(namespace))
    for key, value in as_map(metadata.get("labels")).items():
        c.each(("metadata", "labels"), key, label_key(key))
        c.label_value(("metadata", "labels", key), value)


def _taint(c: Checker, path: FieldPath, taint: Mapping[str, Any]) -> None:
    c.label_key((*path, "key"), taint.get("key"))
    if taint.get("value"):
        c.label_value((*path, "value"), taint.get("value"))
    if taint.get("effect") == "":
        c.missing((*path, "effect"))
    c.one_of((*path, "effect"), taint.get("effect") or None, _TAINT_EFFECTS)


def _toleration(c: Checker, path: FieldPath, toleration: Mapping[str, Any]) -> None:
    if toleration.get("key"):
        c.label_key((*path, "key"), toleration.get("key"))
    operator = toleration.get("operator")
    if operator == "Exists":
        if toleration.get("value"):
            c.add((*path, "value"), invalid(toleration["value"], "must be empty for operator "
                                             "`Exists`"))  # fmt: skip
    elif operator == "Equal":
        c.label_value((*path, "value"), toleration.get("value") or "")
    elif not operator:
        # The API server defaults the operator to Equal before validating.
        c.label_value((*path, "value"), toleration.get("value") or "")
    else:
        c.one_of((*path, "operator"), operator, _TOLERATION_OPERATORS)
    if toleration.get("effect"):
        c.one_of((*path, "effect"), toleration.get("effect"), _TAINT_EFFECTS)


def _counters(c: Checker, path: FieldPath, counters: Any) -> None:
    for name in as_map(counters):
        c.each((*path, name), name, dns_label(name))


def _slice(c: Checker, obj: Mapping[str, Any]) -> None:
    spec = as_map(obj.get("spec"))
    c.driver(("spec", "driver"), spec.get("driver"))
    pool = as_map(spec.get("pool"))
    c.pool(("spec", "pool", "name"), pool.get("name"))
    count = pool.get("resourceSliceCount")
    if isinstance(count, int) and count <= 0:
        c.add(("spec", "pool", "resourceSliceCount"), f"Invalid value: {count}: must be greater "
              "than zero")  # fmt: skip
    generation = pool.get("generation")
    if isinstance(generation, int) and generation < 0:
        c.add(("spec", "pool", "generation"), f"Invalid value: {generation}: must be greater "
              "than or equal to zero")  # fmt: skip
    _node_selection(c, spec)
    devices = as_list(spec.get("devices"))
    for index, device in enumerate(devices):
        _device(c, ("spec", "devices", index), as_map(device))
    c.unique(("spec", "devices"), devices, "name")
    counter_sets = as_list(spec.get("sharedCounters"))
    for index, counter_set in enumerate(counter_sets):
        path = ("spec", "sharedCounters", index)
        c.dns_label((*path, "name"), as_map(counter_set).get("name"))
        _counters(c, (*path, "counters"), as_map(counter_set).get("counters"))
    c.unique(("spec", "sharedCounters"), counter_sets, "name")


def _node_selection(c: Checker, spec: Mapping[str, Any]) -> None:
    """Exactly one of the slice's ways to say which nodes see its devices."""
    chosen = []
    node_name = spec.get("nodeName")
    if node_name == "":
        c.add(
            ("spec", "nodeName"),
            invalid("", "must be either unset or set to a non-empty string"),
        )
    elif isinstance(node_name, str):
        chosen.append("`nodeName`")
        c.dns_subdomain(("spec", "nodeName"), node_name)
    if spec.get("nodeSelector") is not None:
        chosen.append("`nodeSelector`")
    for field_name in ("allNodes", "perDeviceNodeSelection"):
        value = spec.get(field_name)
        if value is True:
            chosen.append(f"`{field_name}`")
        elif value is False:
            c.add(("spec", field_name), "Invalid value: false: must be either unset or set to true")
    one_of = "exactly one of `nodeName`, `nodeSelector`, `allNodes`, `perDeviceNodeSelection` is "
    if not chosen:
        c.add(("spec",), f"Required value: {one_of}required")
    elif len(chosen) > 1:
        shown = go_quote("{" + ", ".join(chosen) + "}")
        c.add(
            ("spec",),
            f"Invalid value: {shown}: {one_of}required, but multiple fields are set",
        )


def _device(c: Checker, path: FieldPath, device: Mapping[str, Any]) -> None:
    c.dns_label((*path, "name"), device.get("name"))
    for name, attribute in as_map(device.get("attributes")).items():
        c.qualified_name((*path, "attributes", name), name)
        # Null fields were dropped by the engine: a present key is a set value.
        if len(as_map(attribute).keys() & _ATTRIBUTE_VALUES) != 1:
            c.add((*path, "attributes", name), invalid("", "exactly one value must be specified"))
    for name in as_map(device.get("capacity")):
        c.qualified_name((*path, "capacity", name), name)
    for index, consumption in enumerate(as_list(device.get("consumesCounters"))):
        consumption = as_map(consumption)
        cpath = (*path, "consumesCounters", index)
        c.dns_label((*cpath, "counterSet"), consumption.get("counterSet"))
        _counters(c, (*cpath, "counters"), consumption.get("counters"))
    for index, taint in enumerate(as_list(device.get("taints"))):
        _taint(c, (*path, "taints", index), as_map(taint))
    node_name = device.get("nodeName")
    if isinstance(node_name, str) and node_name:
        c.dns_subdomain((*path, "nodeName"), node_name)
    for field_name in ("bindingConditions", "bindingFailureConditions"):
        for index, condition in enumerate(as_list(device.get(field_name))):
            c.label_key((*path, field_name, index), condition)


def _claim_spec(c: Checker, path: FieldPath, spec: Mapping[str, Any]) -> dict[str, set[str]]:
    """The claim's names; its requests' names and their subrequests' (for references)."""
    devices = as_map(spec.get("devices"))
    dpath = (*path, "devices")
    requests = as_list(devices.get("requests"))
    known: dict[str, set[str]] = {}
    for index, request in enumerate(requests):
        request = as_map(request)
        rpath = (*dpath, "requests", index)
        c.dns_label((*rpath, "name"), request.get("name"))
        subrequests = as_list(request.get("firstAvailable"))
        known[str(request.get("name"))] = {str(as_map(s).get("name")) for s in subrequests}
        exactly = request.get("exactly")
        if isinstance(exactly, Mapping):
            _exact(c, (*rpath, "exactly"), exactly)
            if subrequests:
                c.add(
                    rpath, f"Invalid value: null: {_ONE_REQUEST_TYPE}, but multiple fields are set"
                )
        elif not subrequests:
            c.add(rpath, f"Required value: {_ONE_REQUEST_TYPE}")
        for sub_index, subrequest in enumerate(subrequests):
            spath = (*rpath, "firstAvailable", sub_index)
            c.dns_label((*spath, "name"), as_map(subrequest).get("name"))
            _exact(c, spath, as_map(subrequest))
        c.unique((*rpath, "firstAvailable"), subrequests, "name")
    c.unique((*dpath, "requests"), requests, "name")
    for index, constraint in enumerate(as_list(devices.get("constraints"))):
        constraint = as_map(constraint)
        cpath = (*dpath, "constraints", index)
        _request_refs(c, (*cpath, "requests"), constraint.get("requests"), known)
        for field_name in ("matchAttribute", "distinctAttribute"):
            c.fully_qualified_name((*cpath, field_name), constraint.get(field_name))
    for index, config in enumerate(as_list(devices.get("config"))):
        config = as_map(config)
        cpath = (*dpath, "config", index)
        _request_refs(c, (*cpath, "requests"), config.get("requests"), known)
        _opaque(c, cpath, config)
    return known


def _exact(c: Checker, path: FieldPath, request: Mapping[str, Any]) -> None:
    c.dns_subdomain((*path, "deviceClassName"), request.get("deviceClassName"))
    for index, toleration in enumerate(as_list(request.get("tolerations"))):
        _toleration(c, (*path, "tolerations", index), as_map(toleration))


def _request_refs(
    c: Checker, path: FieldPath, refs: Any, known: Mapping[str, set[str]] | None
) -> None:
    for index, ref in enumerate(as_list(refs)):
        if isinstance(ref, str):
            _request_ref(c, (*path, index), ref, known)


def _request_ref(
    c: Checker, path: FieldPath, ref: str, known: Mapping[str, set[str]] | None
) -> None:
    """``validateRequestNameRef``: ``request`` or ``request/subrequest`` of this claim."""
    wrong = "must be the name of a request in the claim or the name of a request and a " \
        "subrequest separated by '/'"  # fmt: skip
    segments = ref.split("/")
    if len(segments) > 2:
        c.add(path, invalid(ref, wrong))
        return
    for segment in segments:
        c.each(path, segment, dns_label(segment))
    if known is None:
        return
    subrequests = known.get(segments[0])
    if subrequests is None or (len(segments) == 2 and segments[1] not in subrequests):
        c.add(path, invalid(ref, wrong))


def _opaque(c: Checker, path: FieldPath, config: Mapping[str, Any]) -> None:
    opaque = config.get("opaque")
    if isinstance(opaque, Mapping):
        c.driver((*path, "opaque", "driver"), opaque.get("driver"))


def _claim(c: Checker, obj: Mapping[str, Any]) -> None:
    spec = as_map(obj.get("spec"))
    known = _claim_spec(c, ("spec",), spec)
    devices = as_map(as_map(as_map(obj.get("status")).get("allocation")).get("devices"))
    for index, result in enumerate(as_list(devices.get("results"))):
        result = as_map(result)
        rpath = ("status", "allocation", "devices", "results", index)
        if isinstance(result.get("request"), str):
            _request_ref(c, (*rpath, "request"), result["request"], known)
        c.driver((*rpath, "driver"), result.get("driver"))
        c.pool((*rpath, "pool"), result.get("pool"))
        c.dns_label((*rpath, "device"), result.get("device"))
        for field_name in ("bindingConditions", "bindingFailureConditions"):
            for i, condition in enumerate(as_list(result.get(field_name))):
                c.label_key((*rpath, field_name, i), condition)
        for i, toleration in enumerate(as_list(result.get("tolerations"))):
            _toleration(c, (*rpath, "tolerations", i), as_map(toleration))
    for index, config in enumerate(as_list(devices.get("config"))):
        config = as_map(config)
        cpath = ("status", "allocation", "devices", "config", index)
        _request_refs(c, (*cpath, "requests"), config.get("requests"), known)
        _opaque(c, cpath, config)


def _template(c: Checker, obj: Mapping[str, Any]) -> None:
    template_spec = as_map(obj.get("spec"))
    _claim_spec(c, ("spec", "spec"), as_map(template_spec.get("spec")))


def _device_class(c: Checker, obj: Mapping[str, Any]) -> None:
    for index, config in enumerate(as_list(as_map(obj.get("spec")).get("config"))):
        _opaque(c, ("spec", "config", index), as_map(config))


def _taint_rule(c: Checker, obj: Mapping[str, Any]) -> None:
    spec = as_map(obj.get("spec"))
    selector = spec.get("deviceSelector")
    if isinstance(selector, Mapping):
        path = ("spec", "deviceSelector")
        if selector.get("driver") is not None:
            c.driver((*path, "driver"), selector.get("driver"))
        if selector.get("pool") is not None:
            c.pool((*path, "pool"), selector.get("pool"))
        if selector.get("device") is not None:
            c.dns_label((*path, "device"), selector.get("device"))
    _taint(c, ("spec", "taint"), as_map(spec.get("taint")))


def _pod(c: Checker, obj: Mapping[str, Any]) -> None:
    spec = as_map(obj.get("spec"))
    node_name = spec.get("nodeName")
    if isinstance(node_name, str) and node_name:
        c.dns_subdomain(("spec", "nodeName"), node_name)
    claims = as_list(spec.get("resourceClaims"))
    for index, claim in enumerate(claims):
        claim = as_map(claim)
        path = ("spec", "resourceClaims", index)
        c.dns_label((*path, "name"), claim.get("name"))
        for field_name in ("resourceClaimName", "resourceClaimTemplateName"):
            if claim.get(field_name) is not None:
                c.dns_subdomain((*path, field_name), claim.get(field_name))
    c.unique(("spec", "resourceClaims"), claims, "name", child="name")


_BY_KIND: Final[dict[str, Callable[[Checker, Mapping[str, Any]], None]]] = {
    SLICE_KIND: _slice,
    CLAIM_KIND: _claim,
    CLAIM_TEMPLATE_KIND: _template,
    CLASS_KIND: _device_class,
    TAINT_RULE_KIND: _taint_rule,
    POD_KIND: _pod,
}


def collect_names(c: Checker, obj: Mapping[str, Any]) -> None:
    """Add to ``c`` the name problems of ``obj`` (a wire object in v1 shape)."""
    _metadata(c, obj)
    by_kind = _BY_KIND.get(str(obj.get("kind")))
    if by_kind is not None:
        by_kind(c, obj)
