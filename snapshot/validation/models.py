"""Which kubernetes client model validates each ``(apiVersion, kind)`` drasnap reads."""

from __future__ import annotations

from typing import Final

import pydantic
from drasnap.snapshot.k8s.kinds import (
    CLAIM_KIND,
    CLAIM_TEMPLATE_KIND,
    CLASS_KIND,
    CORE_API_VERSION,
    DRA_API_VERSION,
    KINDS,
    NODE_KIND,
    POD_KIND,
    SLICE_KIND,
    TAINT_RULE_KIND,
)
from drasnap.snapshot.k8s.objects import quote
from drasnap.snapshot.validation.context import Context
from kubernetes import client as k8s_client

DRA_V1BETA2: Final = "resource.k8s.io/v1beta2"
DRA_V1BETA1: Final = "resource.k8s.io/v1beta1"
DRA_V1ALPHA3: Final = "resource.k8s.io/v1alpha3"

MODEL_NAMES: Final[dict[tuple[str, str], str]] = {
    (DRA_API_VERSION, CLAIM_KIND): "ResourceV1ResourceClaim",
    (DRA_API_VERSION, SLICE_KIND): "V1ResourceSlice",
    (DRA_API_VERSION, CLASS_KIND): "V1DeviceClass",
    (DRA_API_VERSION, CLAIM_TEMPLATE_KIND): "V1ResourceClaimTemplate",
    (DRA_API_VERSION, TAINT_RULE_KIND): "V1DeviceTaintRule",
    (DRA_V1BETA2, CLAIM_KIND): "V1beta2ResourceClaim",
    (DRA_V1BETA2, SLICE_KIND): "V1beta2ResourceSlice",
    (DRA_V1BETA2, CLASS_KIND): "V1beta2DeviceClass",
    (DRA_V1BETA2, CLAIM_TEMPLATE_KIND): "V1beta2ResourceClaimTemplate",
    # Kubernetes 1.36 serves DeviceTaintRule in v1beta2 (beta, DRADeviceTaintRules); 1.37 in v1.
    (DRA_V1BETA2, TAINT_RULE_KIND): "V1beta2DeviceTaintRule",
    (DRA_V1ALPHA3, TAINT_RULE_KIND): "V1alpha3DeviceTaintRule",
    (CORE_API_VERSION, POD_KIND): "V1Pod",
    (CORE_API_VERSION, NODE_KIND): "V1Node",
}
"""The versions :func:`snapshot.validation.validate` accepts: v1, and versions whose objects
have v1's shape field for field (``tests/snapshot/ingest/test_conversion.py`` compares the
models)."""

RELABELED_VERSIONS: Final = frozenset({DRA_V1BETA2, DRA_V1ALPHA3})
"""Versions that come out of validation as ``resource.k8s.io/v1``: same shape, new label."""

V1BETA1_MODEL_NAMES: Final[dict[str, str]] = {
    CLAIM_KIND: "V1beta1ResourceClaim",
    SLICE_KIND: "V1beta1ResourceSlice",
    CLASS_KIND: "V1beta1DeviceClass",
    CLAIM_TEMPLATE_KIND: "V1beta1ResourceClaimTemplate",
}
"""The models of ``resource.k8s.io/v1beta1`` objects, whose shape differs from v1's; they are
checked with these and then converted (:mod:`snapshot.ingest.conversion`)."""

_DRA_ALTERNATIVES: Final = f"{DRA_API_VERSION} (or {DRA_V1BETA2})"
EXPECTED_API_VERSION: Final[dict[str, str]] = {
    CLAIM_KIND: _DRA_ALTERNATIVES,
    SLICE_KIND: _DRA_ALTERNATIVES,
    CLASS_KIND: _DRA_ALTERNATIVES,
    CLAIM_TEMPLATE_KIND: _DRA_ALTERNATIVES,
    TAINT_RULE_KIND: f"{DRA_API_VERSION} (or {DRA_V1BETA2} or {DRA_V1ALPHA3})",
    POD_KIND: CORE_API_VERSION,
    NODE_KIND: CORE_API_VERSION,
}


def client_model(name: str) -> type[pydantic.BaseModel]:
    """The ``kubernetes.client`` model class called ``name``."""
    cls: type[pydantic.BaseModel] = getattr(k8s_client, name)
    return cls


def model_for(api_version: str, kind: str, ctx: Context) -> type[pydantic.BaseModel]:
    """The model that validates ``apiVersion``/``kind`` (one of :data:`MODEL_NAMES`).

    Raises:
        ObjectValidationError: an unsupported pair, saying what is expected.
    """
    name = MODEL_NAMES.get((api_version, kind))
    if name is not None:
        return client_model(name)
    if kind in EXPECTED_API_VERSION:
        if api_version == DRA_V1BETA1:
            raise ctx.error(
                f"{api_version} is not supported (its devices and requests have "
                f"the older shape); use {EXPECTED_API_VERSION[kind]}",
                ("apiVersion",),
            )
        raise ctx.error(
            f"expected apiVersion {EXPECTED_API_VERSION[kind]} for a {kind}, "
            f"got {quote(api_version)}",
            ("apiVersion",),
        )
    if kind.endswith("List"):
        raise ctx.error(
            f"{kind} is a list of objects, not an object; validate its items one by one "
            "(snapshot.ingest.manifests.load_manifests does)"
        )
    raise ctx.error(
        f"unknown kind {quote(kind)} (apiVersion {api_version}); "
        f"supported kinds: {', '.join(KINDS)}"
    )
