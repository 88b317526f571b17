"""snapshot.k8s.kinds: one spelling of namespace/name, the keys the store holds."""

from __future__ import annotations

from typing import Any

import pytest
from drasnap.snapshot.errors import ObjectValidationError
from drasnap.snapshot.k8s.kinds import (
    is_namespaced,
    key_of,
    klog_kobj,
    namespace_or_default,
    namespaced_key,
    object_key,
)
from drasnap.snapshot.validation import validate


def obj(kind: str | None, name: str | None, namespace: str | None = None) -> dict[str, Any]:
    out: dict[str, Any] = {"metadata": {}}
    if kind is not None:
        out["kind"] = kind
    if name is not None:
        out["metadata"]["name"] = name
    if namespace is not None:
        out["metadata"]["namespace"] = namespace
    return out


@pytest.mark.parametrize(
    ("o", "key"),
    [
        (obj("ResourceClaim", "c", "ml"), "ml/c"),
        (obj("ResourceClaim", "c"), "default/c"),
        (obj("ResourceClaim", "c", ""), "default/c"),
        (obj("Pod", "p"), "default/p"),
        (obj(None, "p", "x"), "x/p"),
        (obj(None, "p"), "default/p"),
    ],
    ids=["claim", "claim-no-ns", "claim-empty-ns", "pod-no-ns", "no-kind", "no-kind-no-ns"],
)
def test_key_of_defaults_the_namespace(o: dict[str, Any], key: str) -> None:
    """The store key of claims and pods: the same before and after validation."""
    assert key_of(o) == key
    assert object_key(o) == key


@pytest.mark.parametrize(
    ("o", "key"),
    [
        (obj("Node", "node-a"), "node-a"),
        (obj("DeviceClass", "gpu.example.com"), "gpu.example.com"),
        (obj("ResourceSlice", "s", "ignored"), "s"),
        (obj("DeviceTaintRule", "r"), "r"),
        (obj("ResourceClaimTemplate", "t", "ml"), "ml/t"),
        (obj("Deployment", "d"), "default/d"),
    ],
    ids=["node", "class", "slice-with-ns", "taint-rule", "template", "workload"],
)
def test_object_key_follows_the_scope(o: dict[str, Any], key: str) -> None:
    assert object_key(o) == key


def test_validated_and_hand_written_objects_have_one_key() -> None:
    claim = {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaim",
        "metadata": {"name": "c"},
        "spec": {"devices": {}},
    }
    assert key_of(claim) == key_of(validate(claim)) == "default/c"


def test_missing_name_is_an_error() -> None:
    with pytest.raises(ObjectValidationError, match=r"metadata\.name must be a non-empty string"):
        key_of(obj("Pod", None))
    with pytest.raises(ObjectValidationError) as info:
        object_key(obj("Node", ""))
    assert info.value.field == "metadata.name"


def test_klog_kobj_is_a_display_form() -> None:
    """klog.KObj prints the bare name without a namespace: never a store key."""
    assert klog_kobj(obj("ResourceClaim", "c")) == "c"
    assert klog_kobj(obj("ResourceClaim", "c", "ml")) == "ml/c"
    assert key_of(obj("ResourceClaim", "c")) == "default/c"


def test_small_helpers() -> None:
    assert namespaced_key("ml", "c") == "ml/c"
    assert namespace_or_default({"metadata": None}) == "default"
    assert not is_namespaced("Node")
    assert is_namespaced("Pod")


class _Namespace(str):
    """A str subclass: keys are made from its value, as from a plain str."""


@pytest.mark.parametrize(
    ("o", "key"),
    [
        ({"metadata": {"name": "p", "namespace": _Namespace("ml")}}, "ml/p"),
        ({"metadata": {"name": "p", "namespace": None}}, "default/p"),
        ({"metadata": {"name": "p", "namespace": 7}}, "default/p"),
        ({"metadata": {"name": _Namespace("p")}}, "default/p"),
    ],
    ids=["str-subclass-namespace", "null-namespace", "non-string-namespace", "str-subclass-name"],
)
def test_key_of_reads_odd_metadata_as_the_validator_would(o: dict[str, Any], key: str) -> None:
    """Plain dicts take a quicker path through key_of; the odd values give the same keys."""
    assert key_of(o) == key
    assert key_of(_Mapping(o)) == key


class _Mapping(dict[str, Any]):
    """A dict subclass, so key_of takes its general path."""


def test_key_of_refuses_a_non_string_name_on_both_paths() -> None:
    for o in ({"metadata": {"name": 5}}, _Mapping({"metadata": {"name": ""}})):
        with pytest.raises(ObjectValidationError, match=r"metadata\.name"):
            key_of(o)
