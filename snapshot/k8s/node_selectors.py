"""Whether a node matches a core/v1 NodeSelector, as ``k8s.io/component-helpers``'
``nodeaffinity`` matches one (terms ORed, requirements ANDed; labels and the ``metadata.name``
field). Used by the allocator for slices and devices, and by the cluster snapshot for claims'
allocation results.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from drasnap.snapshot.errors import AllocationError

__all__ = ["node_selector_matches"]

_INT_RE = re.compile(r"[+-]?[0-9]+")
_LABEL_OPERATORS = frozenset({"In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt"})


def _int64(text: str) -> int | None:
    """Go's ``strconv.ParseInt(text, 10, 64)``, or None when it would fail."""
    if not _INT_RE.fullmatch(text):
        return None
    value = int(text)
    return value if -(2**63) <= value < 2**63 else None


def _label_requirement(req: Mapping[str, Any], labels: Mapping[str, str]) -> bool:
    key, op = str(req.get("key", "")), str(req.get("operator", ""))
    values = [str(v) for v in req.get("values") or ()]
    if op not in _LABEL_OPERATORS:
        raise AllocationError(f"operator {op!r} is not supported in matchExpressions")
    if op in ("In", "NotIn") and not values:
        raise AllocationError(f"key {key}: values must be non-empty for operator {op}")
    if op in ("Exists", "DoesNotExist") and values:
        raise AllocationError(f"key {key}: values must be empty for operator {op}")
    if op in ("Gt", "Lt") and (len(values) != 1 or _int64(values[0]) is None):
        raise AllocationError(f"key {key}: operator {op} needs exactly one integer value")
    present = key in labels
    if op == "In":
        return present and labels[key] in values
    if op == "NotIn":
        return not present or labels[key] not in values
    if op == "Exists":
        return present
    if op == "DoesNotExist":
        return not present
    have = _int64(labels[key]) if present else None
    if have is None:
        return False
    want = _int64(values[0])
    assert want is not None
    return have > want if op == "Gt" else have < want


def _field_requirement(req: Mapping[str, Any], node_name: str) -> bool:
    key, op = str(req.get("key", "")), str(req.get("operator", ""))
    values = [str(v) for v in req.get("values") or ()]
    if op not in ("In", "NotIn"):
        raise AllocationError(f"operator {op!r} is not supported in matchFields")
    if len(values) != 1:
        raise AllocationError(f"matchFields key {key}: values must have one element")
    # Nodes only have the field metadata.name; any other key reads as "".
    actual = node_name if key == "metadata.name" else ""
    return (actual == values[0]) == (op == "In")


def node_selector_matches(
    selector: Mapping[str, Any], node_name: str, labels: Mapping[str, str]
) -> bool:
    """Whether a core/v1 NodeSelector matches the node (terms ORed, requirements ANDed).

    >>> node_selector_matches({"nodeSelectorTerms": [{"matchExpressions": [
    ...     {"key": "zone", "operator": "In", "values": ["a"]}]}]}, "n1", {"zone": "a"})
    True

    Raises:
        AllocationError: a requirement is malformed (unknown operator, wrong number of values).
    """
    matched = False
    for term in selector.get("nodeSelectorTerms") or ():
        expressions = term.get("matchExpressions") or ()
        fields = term.get("matchFields") or ()
        if not expressions and not fields:
            continue  # an empty term selects nothing
        # Evaluate every requirement so that a malformed one is reported even after a match.
        ok = all([_label_requirement(r, labels) for r in expressions])
        ok = all([_field_requirement(r, node_name) for r in fields]) and ok
        matched = matched or ok
    return matched
