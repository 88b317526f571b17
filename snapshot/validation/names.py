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
'[a-z0-9]([-a-z0-9]*[a-z0-9])?')`` (the double space is upstream's). The first problem is
raised, with the paths of up to three more.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from functools import lru_cache
from typing import Any, Final

import orjson
from drasnap.snapshot.k8s.kinds import (
    CLAIM_KIND,
    CLAIM_TEMPLATE_KIND,
    CLASS_KIND,
    POD_KIND,
    SLICE_KIND,
    TAINT_RULE_KIND,
)
from drasnap.snapshot.validation.context import Context, FieldPath
from drasnap.snapshot.validation.formats import (
    C_IDENTIFIER_MSG,
    C_IDENTIFIER_RE,
    DEVICE_MAX_ID_LENGTH,
    DRIVER_NAME_MAX,
    POOL_NAME_MAX,
    dns_label,
    dns_subdomain,
    label_key,
    label_value,
)

__all__ = ["check_names"]

_TAINT_EFFECTS: Final = ("NoExecute", "NoSchedule", "None")
# A device attribute holds exactly one of these (the list forms behind DRAListTypeAttributes).
_ATTRIBUTE_VALUES: Final = frozenset(
    {"bool", "int", "string", "version", "bools", "ints", "strings", "versions"}
)
_TOLERATION_OPERATORS: Final = ("Equal", "Exists")
_ONE_REQUEST_TYPE: Final = "exactly one of `exactly` or `firstAvailable` is required"
Problem = tuple[FieldPath, str]

# -- field errors in the API server's words ---------------------------------------------------


def _go_quote(value: str) -> str:
    return orjson.dumps(value).decode()


def _invalid(value: str, detail: str) -> str:
    return f"Invalid value: {_go_quote(value)}: {detail}"


class _Checker:
    """Collects the problems of one object, in field order."""

    __slots__ = ("problems",)

    def __init__(self) -> None:
        self.problems: list[Problem] = []

    def add(self, path: FieldPath, body: str) -> None:
        self.problems.append((path, body))

    def each(self, path: FieldPath, value: str, errs: Iterable[str]) -> None:
        for detail in errs:
            self.add(path, _invalid(value, detail))

    def required(self, path: FieldPath, value: Any) -> bool:
        """Report a missing or empty string; whether there is a string to check."""
        if value is None or value == "":
            self.add(path, "Required value")
            return False
        return isinstance(value, str)

    def dns_label(self, path: FieldPath, value: Any) -> None:
        if self.required(path, value):
            self.each(path, value, dns_label(value))

    def dns_subdomain(self, path: FieldPath, value: Any) -> None:
        if self.required(path, value):
            self.each(path, value, dns_subdomain(value))

    def driver(self, path: FieldPath, value: Any) -> None:
        """``ValidateCSIDriverName``, which DRA driver names reuse."""
        if not self.required(path, value):
            return
        if len(value) > DRIVER_NAME_MAX:
            self.add(path, f"Too long: may not be more than {DRIVER_NAME_MAX} bytes")
        self.each(path, value, dns_subdomain(value.lower()))

    def pool(self, path: FieldPath, value: Any) -> None:
        if not self.required(path, value):
            return
        if len(value) > POOL_NAME_MAX:
            self.add(path, f"Too long: may not be more than {POOL_NAME_MAX} bytes")
        for part in value.split("/"):
            self.each(path, part, dns_subdomain(part))

    def label_key(self, path: FieldPath, value: Any) -> None:
        if self.required(path, value):
            self.each(path, value, label_key(value))

    def label_value(self, path: FieldPath, value: Any) -> None:
        if isinstance(value, str):
            self.each(path, value, label_value(value))

    def c_identifier(self, path: FieldPath, value: str) -> None:
        if len(value) > DEVICE_MAX_ID_LENGTH:
            self.add(path, f"Too long: may not be more than {DEVICE_MAX_ID_LENGTH} bytes")
        if not C_IDENTIFIER_RE.fullmatch(value):
            self.add(path, _invalid(value, C_IDENTIFIER_MSG))

    def qualified_name(self, path: FieldPath, value: str) -> None:
        """An attribute or capacity name: ``C identifier`` or ``domain/C identifier``."""
        for body in _qualified_name_problems(value):
            self.add(path, body)

    def qualified_name_uncached(self, path: FieldPath, value: str) -> None:
        parts = value.split("/")
        if len(parts) == 1:
            self.c_identifier(path, parts[0])
            return
        # Upstream leaves names with more than one slash to its declarative validation.
        domain, name = parts[0], parts[1]
        if not domain:
            self.add(path, _invalid("", "the domain must not be empty"))
        else:
            self.driver(path, domain)
        if not name:
            self.add(path, _invalid("", "the name must not be empty"))
        else:
            self.c_identifier(path, name)

    def fully_qualified_name(self, path: FieldPath, value: Any) -> None:
        if not isinstance(value, str):
            return
        self.qualified_name(path, value)
        if "/" not in value:
            self.add(
                path,
                _invalid(value, "a fully qualified name must be a domain and a name separated "
                         "by a slash"),
            )  # fmt: skip

    def one_of(self, path: FieldPath, value: Any, allowed: tuple[str, ...]) -> None:
        if isinstance(value, str) and value not in allowed:
            supported = ", ".join(_go_quote(v) for v in allowed)
            self.add(path, f"Unsupported value: {_go_quote(value)}: supported values: {supported}")

    def unique(self, path: FieldPath, items: list[Any], key: str) -> None:
        seen: set[str] = set()
        for index, item in enumerate(items):
            value = item.get(key) if isinstance(item, Mapping) else None
            if not isinstance(value, str):
                continue
            if value in seen:
                self.add((*path, index), f"Duplicate value: {_go_quote(value)}")
            seen.add(value)


@lru_cache(maxsize=8192)
def _qualified_name_problems(value: str) -> tuple[str, ...]:
    """The same attribute names recur on every device of every slice: checked once each."""
    c = _Checker()
    c.qualified_name_uncached((), value)
    return tuple(body for _, body in c.problems)


# The objects checked come from JSON (the engine's copy): plain dicts and lists, which a type
# test recognises faster than an isinstance against the abstract Mapping.
_EMPTY: Final[dict[str, Any]] = {}


def _list(value: Any) -> list[Any]:
    return value if type(value) is list else []


def _map(value: Any) -> Mapping[str, Any]:
    return value if type(value) is dict else _EMPTY


# -- per kind -------------------------------------------------------------------------------


def _metadata(c: _Checker, obj: Mapping[str, Any]) -> None:
    metadata = _map(obj.get("metadata"))
    name = metadata.get("name")
    if isinstance(name, str) and name:
        c.each(("metadata", "name"), name, dns_subdomain(name))
    namespace = metadata.get("namespace")
    if isinstance(namespace, str) and namespace:
        c.each(("metadata", "namespace"), namespace, dns_label(namespace))
    for key, value in _map(metadata.get("labels")).items():
        c.each(("metadata", "labels"), key, label_key(key))
        c.label_value(("metadata", "labels", key), value)


def _taint(c: _Checker, path: FieldPath, taint: Mapping[str, Any]) -> None:
    c.label_key((*path, "key"), taint.get("key"))
    if taint.get("value"):
        c.label_value((*path, "value"), taint.get("value"))
    c.one_of((*path, "effect"), taint.get("effect"), _TAINT_EFFECTS)


def _toleration(c: _Checker, path: FieldPath, toleration: Mapping[str, Any]) -> None:
    if toleration.get("key"):
        c.label_key((*path, "key"), toleration.get("key"))
    operator = toleration.get("operator")
    if operator == "Exists":
        if toleration.get("value"):
            c.add((*path, "value"), _invalid(toleration["value"], "must be empty for operator "
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


def _counters(c: _Checker, path: FieldPath, counters: Any) -> None:
    for name in _map(counters):
        c.each((*path, name), name, dns_label(name))


def _slice(c: _Checker, obj: Mapping[str, Any]) -> None:
    spec = _map(obj.get("spec"))
    c.driver(("spec", "driver"), spec.get("driver"))
    pool = _map(spec.get("pool"))
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
    devices = _list(spec.get("devices"))
    for index, device in enumerate(devices):
        _device(c, ("spec", "devices", index), _map(device))
    c.unique(("spec", "devices"), devices, "name")
    counter_sets = _list(spec.get("sharedCounters"))
    for index, counter_set in enumerate(counter_sets):
        path = ("spec", "sharedCounters", index)
        c.dns_label((*path, "name"), _map(counter_set).get("name"))
        _counters(c, (*path, "counters"), _map(counter_set).get("counters"))
    c.unique(("spec", "sharedCounters"), counter_sets, "name")


def _node_selection(c: _Checker, spec: Mapping[str, Any]) -> None:
    """Exactly one of the slice's ways to say which nodes see its devices."""
    chosen = []
    node_name = spec.get("nodeName")
    if node_name == "":
        c.add(
            ("spec", "nodeName"),
            _invalid("", "must be either unset or set to a non-empty string"),
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
        shown = _go_quote("{" + ", ".join(chosen) + "}")
        c.add(
            ("spec",),
            f"Invalid value: {shown}: {one_of}required, but multiple fields are set",
        )


def _device(c: _Checker, path: FieldPath, device: Mapping[str, Any]) -> None:
    c.dns_label((*path, "name"), device.get("name"))
    for name, attribute in _map(device.get("attributes")).items():
        c.qualified_name((*path, "attributes", name), name)
        # Null fields were dropped by the engine: a present key is a set value.
        if len(_map(attribute).keys() & _ATTRIBUTE_VALUES) != 1:
            c.add((*path, "attributes", name), _invalid("", "exactly one value must be specified"))
    for name in _map(device.get("capacity")):
        c.qualified_name((*path, "capacity", name), name)
    for index, consumption in enumerate(_list(device.get("consumesCounters"))):
        consumption = _map(consumption)
        cpath = (*path, "consumesCounters", index)
        c.dns_label((*cpath, "counterSet"), consumption.get("counterSet"))
        _counters(c, (*cpath, "counters"), consumption.get("counters"))
    for index, taint in enumerate(_list(device.get("taints"))):
        _taint(c, (*path, "taints", index), _map(taint))
    node_name = device.get("nodeName")
    if isinstance(node_name, str) and node_name:
        c.dns_subdomain((*path, "nodeName"), node_name)
    for field_name in ("bindingConditions", "bindingFailureConditions"):
        for index, condition in enumerate(_list(device.get(field_name))):
            c.label_key((*path, field_name, index), condition)


def _claim_spec(c: _Checker, path: FieldPath, spec: Mapping[str, Any]) -> None:
    devices = _map(spec.get("devices"))
    dpath = (*path, "devices")
    requests = _list(devices.get("requests"))
    known: dict[str, set[str]] = {}
    for index, request in enumerate(requests):
        request = _map(request)
        rpath = (*dpath, "requests", index)
        c.dns_label((*rpath, "name"), request.get("name"))
        subrequests = _list(request.get("firstAvailable"))
        known[str(request.get("name"))] = {str(_map(s).get("name")) for s in subrequests}
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
            c.dns_label((*spath, "name"), _map(subrequest).get("name"))
            _exact(c, spath, _map(subrequest))
        c.unique((*rpath, "firstAvailable"), subrequests, "name")
    c.unique((*dpath, "requests"), requests, "name")
    for index, constraint in enumerate(_list(devices.get("constraints"))):
        constraint = _map(constraint)
        cpath = (*dpath, "constraints", index)
        _request_refs(c, (*cpath, "requests"), constraint.get("requests"), known)
        for field_name in ("matchAttribute", "distinctAttribute"):
            c.fully_qualified_name((*cpath, field_name), constraint.get(field_name))
    for index, config in enumerate(_list(devices.get("config"))):
        config = _map(config)
        cpath = (*dpath, "config", index)
        _request_refs(c, (*cpath, "requests"), config.get("requests"), known)
        _opaque(c, cpath, config)


def _exact(c: _Checker, path: FieldPath, request: Mapping[str, Any]) -> None:
    c.dns_subdomain((*path, "deviceClassName"), request.get("deviceClassName"))
    for index, toleration in enumerate(_list(request.get("tolerations"))):
        _toleration(c, (*path, "tolerations", index), _map(toleration))


def _request_refs(
    c: _Checker, path: FieldPath, refs: Any, known: Mapping[str, set[str]] | None
) -> None:
    for index, ref in enumerate(_list(refs)):
        if isinstance(ref, str):
            _request_ref(c, (*path, index), ref, known)


def _request_ref(
    c: _Checker, path: FieldPath, ref: str, known: Mapping[str, set[str]] | None
) -> None:
    """``validateRequestNameRef``: ``request`` or ``request/subrequest`` of this claim."""
    wrong = "must be the name of a request in the claim or the name of a request and a " \
        "subrequest separated by '/'"  # fmt: skip
    segments = ref.split("/")
    if len(segments) > 2:
        c.add(path, _invalid(ref, wrong))
        return
    for segment in segments:
        c.each(path, segment, dns_label(segment))
    if known is None:
        return
    subrequests = known.get(segments[0])
    if subrequests is None or (len(segments) == 2 and segments[1] not in subrequests):
        c.add(path, _invalid(ref, wrong))


def _opaque(c: _Checker, path: FieldPath, config: Mapping[str, Any]) -> None:
    opaque = config.get("opaque")
    if isinstance(opaque, Mapping):
        c.driver((*path, "opaque", "driver"), opaque.get("driver"))


def _claim(c: _Checker, obj: Mapping[str, Any]) -> None:
    spec = _map(obj.get("spec"))
    _claim_spec(c, ("spec",), spec)
    allocation = _map(_map(obj.get("status")).get("allocation"))
    results = _list(_map(allocation.get("devices")).get("results"))
    for index, result in enumerate(results):
        result = _map(result)
        rpath = ("status", "allocation", "devices", "results", index)
        if isinstance(result.get("request"), str):
            _request_ref(c, (*rpath, "request"), result["request"], None)
        c.driver((*rpath, "driver"), result.get("driver"))
        c.pool((*rpath, "pool"), result.get("pool"))
        c.dns_label((*rpath, "device"), result.get("device"))


def _template(c: _Checker, obj: Mapping[str, Any]) -> None:
    template_spec = _map(obj.get("spec"))
    _claim_spec(c, ("spec", "spec"), _map(template_spec.get("spec")))


def _device_class(c: _Checker, obj: Mapping[str, Any]) -> None:
    for index, config in enumerate(_list(_map(obj.get("spec")).get("config"))):
        _opaque(c, ("spec", "config", index), _map(config))


def _taint_rule(c: _Checker, obj: Mapping[str, Any]) -> None:
    spec = _map(obj.get("spec"))
    selector = spec.get("deviceSelector")
    if isinstance(selector, Mapping):
        path = ("spec", "deviceSelector")
        if selector.get("driver") is not None:
            c.driver((*path, "driver"), selector.get("driver"))
        if selector.get("pool") is not None:
            c.pool((*path, "pool"), selector.get("pool"))
        if selector.get("device") is not None:
            c.dns_label((*path, "device"), selector.get("device"))
    _taint(c, ("spec", "taint"), _map(spec.get("taint")))


def _pod(c: _Checker, obj: Mapping[str, Any]) -> None:
    spec = _map(obj.get("spec"))
    node_name = spec.get("nodeName")
    if isinstance(node_name, str) and node_name:
        c.dns_subdomain(("spec", "nodeName"), node_name)
    claims = _list(spec.get("resourceClaims"))
    for index, claim in enumerate(claims):
        claim = _map(claim)
        path = ("spec", "resourceClaims", index)
        c.dns_label((*path, "name"), claim.get("name"))
        for field_name in ("resourceClaimName", "resourceClaimTemplateName"):
            if claim.get(field_name) is not None:
                c.dns_subdomain((*path, field_name), claim.get(field_name))
    c.unique(("spec", "resourceClaims"), claims, "name")


_BY_KIND: Final[dict[str, Callable[[_Checker, Mapping[str, Any]], None]]] = {
    SLICE_KIND: _slice,
    CLAIM_KIND: _claim,
    CLAIM_TEMPLATE_KIND: _template,
    CLASS_KIND: _device_class,
    TAINT_RULE_KIND: _taint_rule,
    POD_KIND: _pod,
}


def check_names(obj: Mapping[str, Any], ctx: Context) -> None:
    """Refuse the names of ``obj`` (a wire object in v1 shape) that the API server would.

    Raises:
        ObjectValidationError: the first problem, its path shown through ``ctx``, with the
            paths of up to three more.
    """
    c = _Checker()
    _metadata(c, obj)
    by_kind = _BY_KIND.get(str(obj.get("kind")))
    if by_kind is not None:
        by_kind(c, obj)
    if not c.problems:
        return
    path, body = c.problems[0]
    others = list(dict.fromkeys(ctx.shown_path(p) for p, _ in c.problems[1:]))
    if others:
        more = len(c.problems) - 1
        body += f" (and {more} more problem{'s' if more > 1 else ''}: {', '.join(others[:3])}"
        body += ", ...)" if len(others) > 3 else ")"
    raise ctx.error(body, path)
