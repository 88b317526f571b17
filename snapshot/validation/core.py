"""The rules of ``pkg/apis/core/validation/validation.go`` that DRA objects and pods meet.

- ``ValidateNodeSelector`` (a slice's and a device's ``nodeSelector``, an allocation's): at
  least one term; per requirement the operator and the number of values it takes, a label key,
  label values; ``matchFields`` only on ``metadata.name``, with one node name.
- A pod's claims (``validatePodResourceClaim``, ``validateResourceClaimNames``,
  ``validatePodResourceClaimStatuses``): each entry of ``spec.resourceClaims`` names exactly
  one of a claim and a template; a container's ``resources.claims`` name entries of
  ``spec.resourceClaims``; ``status.resourceClaimStatuses`` name them too, once each.

The name formats of these objects are :mod:`snapshot.validation.names`'.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from drasnap.snapshot.validation.context import FieldPath
from drasnap.snapshot.validation.formats import dns_label, dns_subdomain, label_key, label_value
from drasnap.snapshot.validation.problems import Checker, as_list, as_map

__all__ = ["check_node_selector", "check_pod"]

_IN_NOT_IN: Final = frozenset({"In", "NotIn"})
_EXISTS: Final = frozenset({"Exists", "DoesNotExist"})
_GT_LT: Final = frozenset({"Gt", "Lt"})
_NODE_NAME_FIELD: Final = "metadata.name"


def check_node_selector(c: Checker, path: FieldPath, selector: Mapping[str, Any]) -> None:
    """``ValidateNodeSelector`` (label values checked: the API server's default)."""
    terms_path = (*path, "nodeSelectorTerms")
    terms = as_list(selector.get("nodeSelectorTerms"))
    if not terms:
        c.missing(terms_path, "must have at least one node selector term")
        return
    for index, term in enumerate(terms):
        term = as_map(term)
        tpath = (*terms_path, index)
        for j, requirement in enumerate(as_list(term.get("matchExpressions"))):
            _label_requirement(c, (*tpath, "matchExpressions", j), as_map(requirement))
        for j, requirement in enumerate(as_list(term.get("matchFields"))):
            _field_requirement(c, (*tpath, "matchFields", j), as_map(requirement))


def _label_requirement(c: Checker, path: FieldPath, requirement: Mapping[str, Any]) -> None:
    """``ValidateNodeSelectorRequirement``."""
    operator = requirement.get("operator")
    values = as_list(requirement.get("values"))
    if operator in _IN_NOT_IN:
        if not values:
            c.missing((*path, "values"), "must be specified when `operator` is 'In' or 'NotIn'")
    elif operator in _EXISTS:
        if values:
            c.forbidden(
                (*path, "values"),
                "may not be specified when `operator` is 'Exists' or 'DoesNotExist'",
            )
    elif operator in _GT_LT:
        if len(values) != 1:
            c.missing(
                (*path, "values"), "must be specified single value when `operator` is 'Lt' or 'Gt'"
            )
    else:
        c.invalid((*path, "operator"), operator, "not a valid selector operator")
    key = requirement.get("key")
    if isinstance(key, str):
        c.each((*path, "key"), key, label_key(key))
    for index, value in enumerate(values):
        if isinstance(value, str):
            c.each((*path, "values", index), value, label_value(value))


def _field_requirement(c: Checker, path: FieldPath, requirement: Mapping[str, Any]) -> None:
    """``ValidateNodeFieldSelectorRequirement``: only ``metadata.name``, with one node name."""
    operator = requirement.get("operator")
    values = as_list(requirement.get("values"))
    if operator in _IN_NOT_IN:
        if len(values) != 1:
            c.missing(
                (*path, "values"),
                "must be only one value when `operator` is 'In' or 'NotIn' for node field selector",
            )
    else:
        c.invalid((*path, "operator"), operator, "not a valid selector operator")
    key = requirement.get("key")
    if key != _NODE_NAME_FIELD:
        c.invalid((*path, "key"), key, "not a valid field selector key")
        return
    for index, value in enumerate(values):
        if isinstance(value, str):
            c.each((*path, "values", index), value, dns_subdomain(value))


def check_pod(c: Checker, obj: Mapping[str, Any]) -> None:
    """A pod's claims and the references to them (their names: ``names``)."""
    spec = as_map(obj.get("spec"))
    claims = as_list(spec.get("resourceClaims"))
    for index, claim in enumerate(claims):
        claim = as_map(claim)
        has_claim = claim.get("resourceClaimName") is not None
        has_template = claim.get("resourceClaimTemplateName") is not None
        if has_claim and has_template:
            c.invalid(
                ("spec", "resourceClaims", index),
                claim,
                "at most one of `resourceClaimName` or `resourceClaimTemplateName` may be "
                "specified",
            )
        elif not has_claim and not has_template:
            c.invalid(
                ("spec", "resourceClaims", index),
                claim,
                "must specify one of: `resourceClaimName`, `resourceClaimTemplateName`",
            )
    known = {str(as_map(claim).get("name")) for claim in claims if as_map(claim).get("name")}
    for field_name in ("initContainers", "containers"):
        for index, container in enumerate(as_list(spec.get(field_name))):
            resources = as_map(as_map(container).get("resources"))
            cpath: FieldPath = ("spec", field_name, index, "resources", "claims")
            _container_claims(c, cpath, as_list(resources.get("claims")), known)
    statuses = as_list(as_map(obj.get("status")).get("resourceClaimStatuses"))
    seen: set[str] = set()
    for index, status in enumerate(statuses):
        status = as_map(status)
        path = ("status", "resourceClaimStatuses", index, "name")
        name = status.get("name")
        if name not in known:
            c.invalid(path, name, "must match the name of an entry in `spec.resourceClaims`")
        if isinstance(name, str):
            if name in seen:
                c.duplicate(path, name)
            seen.add(name)
        claim_name = status.get("resourceClaimName")
        if isinstance(claim_name, str):
            c.each(path, claim_name, dns_subdomain(claim_name))


def _container_claims(c: Checker, path: FieldPath, claims: list[Any], known: set[str]) -> None:
    """``validateResourceClaimNames``."""
    seen: set[str] = set()
    for index, claim in enumerate(claims):
        claim = as_map(claim)
        name = claim.get("name")
        if not name or not isinstance(name, str):
            c.missing((*path, index))
            continue
        key = name
        request = claim.get("request")
        if isinstance(request, str) and request:
            c.each((*path, index, "request"), request, dns_label(request))
            key = f"{name}/{request}"
        if key in seen:
            c.duplicate((*path, index), key)
        seen.add(key)
        if name not in known:
            names = ", ".join(sorted(known))
            detail = "must be one of the names in pod.spec.resourceClaims"
            c.not_found(
                (*path, index), name, f"{detail}: {names}" if known else f"{detail} which is empty"
            )
