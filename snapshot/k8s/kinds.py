"""Kubernetes kinds, API versions and object keys: the one home of ``namespace/name``.

The kind names are also the store's kinds (part of the on-disk format that SQL users query),
and the keys computed here are the store's keys, which every ``state_digest`` covers:

==========================  ==============================  =====================================
kind                        scope                           key (:func:`object_key`)
==========================  ==============================  =====================================
``DeviceClass``             cluster                         name
``ResourceSlice``           cluster                         name (the store keys slices by node,
                                                            or :data:`NON_LOCAL_SLICES_KEY`)
``DeviceTaintRule``         cluster                         name
``Node``                    cluster                         name
``ResourceClaimTemplate``   namespaced                      ``namespace/name``
``ResourceClaim``           namespaced                      ``namespace/name``
``Pod``                     namespaced                      ``namespace/name``
==========================  ==============================  =====================================

A namespaced object without ``metadata.namespace`` (or with an empty one) is in ``"default"``,
as the API server places it; :func:`snapshot.validation.validate` writes that default into the
object, and every key computed here assumes it, so a claim written by hand and the same claim
after validation have the same key.

:func:`klog_kobj` is another thing: klog's ``KObj`` display form (``name`` alone when there is
no namespace), used in messages that quote upstream's wording. It is never a key.
"""

from __future__ import annotations

import hashlib
import uuid
from collections.abc import Mapping
from typing import Any, Final

from drasnap.snapshot.errors import ObjectValidationError
from drasnap.snapshot.k8s.objects import object_label

__all__ = [
    "CLAIM_KIND",
    "CLAIM_TEMPLATE_KIND",
    "CLASS_KIND",
    "CLUSTER_SCOPED_KINDS",
    "CORE_API_VERSION",
    "DEFAULT_NAMESPACE",
    "DRA_API_VERSION",
    "DRA_GROUP",
    "KINDS",
    "MAX_GENERATED_NAME_LENGTH",
    "NODE_KIND",
    "NON_LOCAL_SLICES_KEY",
    "POD_KIND",
    "SLICE_KIND",
    "TAINT_RULE_KIND",
    "generated_name",
    "generated_uid",
    "is_namespaced",
    "key_of",
    "klog_kobj",
    "name_suffix",
    "namespace_or_default",
    "namespaced_key",
    "object_key",
    "safe_encode",
]

DRA_GROUP: Final = "resource.k8s.io"
DRA_API_VERSION: Final = "resource.k8s.io/v1"
CORE_API_VERSION: Final = "v1"

CLASS_KIND: Final = "DeviceClass"
SLICE_KIND: Final = "ResourceSlice"
TAINT_RULE_KIND: Final = "DeviceTaintRule"
NODE_KIND: Final = "Node"
CLAIM_TEMPLATE_KIND: Final = "ResourceClaimTemplate"
CLAIM_KIND: Final = "ResourceClaim"
POD_KIND: Final = "Pod"

KINDS: Final = (
    CLASS_KIND,
    SLICE_KIND,
    TAINT_RULE_KIND,
    NODE_KIND,
    CLAIM_TEMPLATE_KIND,
    CLAIM_KIND,
    POD_KIND,
)
"""The kinds validated and loaded, in dependency order (what a snapshot is usually built in)."""

CLUSTER_SCOPED_KINDS: Final = frozenset({CLASS_KIND, SLICE_KIND, TAINT_RULE_KIND, NODE_KIND})
"""Kinds without a namespace; every other kind drasnap reads is namespaced."""

DEFAULT_NAMESPACE: Final = "default"

NON_LOCAL_SLICES_KEY: Final = "--NON-LOCAL--"
"""Store key of the global slices; a node name cannot start with ``-`` (upstream's key)."""


def is_namespaced(kind: str | None) -> bool:
    """Whether objects of ``kind`` live in a namespace (unknown kinds are taken to)."""
    return kind not in CLUSTER_SCOPED_KINDS


def namespace_or_default(obj: Mapping[str, Any]) -> str:
    """``metadata.namespace``, or ``"default"`` when it is missing or empty."""
    namespace = (obj.get("metadata") or {}).get("namespace")
    if type(namespace) is str:  # the usual case, without isinstance's subclass walk
        return namespace or DEFAULT_NAMESPACE
    return namespace if isinstance(namespace, str) and namespace else DEFAULT_NAMESPACE


def namespaced_key(namespace: str, name: str) -> str:
    """The key of a namespaced object: ``"namespace/name"``."""
    return f"{namespace}/{name}"


def key_of(obj: Mapping[str, Any]) -> str:
    """The store key of a namespaced object (a claim, a pod): ``"namespace/name"``.

    The namespace defaults to ``"default"`` (:func:`namespace_or_default`).

    Raises:
        ObjectValidationError: the object has no ``metadata.name`` string.
    """
    # Plain dicts first: this runs for every write of a pod or claim (350,000 calls in the
    # no-DRA scale-up), and ``isinstance(x, Mapping)`` is an ABC check, slower than the rest.
    metadata = obj.get("metadata") if type(obj) is dict else None
    if type(metadata) is dict:
        name = metadata.get("name")
        if type(name) is str and name:
            namespace = metadata.get("namespace")
            if type(namespace) is str and namespace:
                return f"{namespace}/{name}"
            if not namespace:
                return f"{DEFAULT_NAMESPACE}/{name}"
    metadata = obj.get("metadata") if isinstance(obj, Mapping) else None
    name = metadata.get("name") if isinstance(metadata, Mapping) else None
    if not isinstance(name, str) or not name:
        kind = obj.get("kind") if isinstance(obj, Mapping) else None
        raise ObjectValidationError(
            f"{object_label(obj)}: metadata.name must be a non-empty string",
            kind=kind if isinstance(kind, str) else None,
            field="metadata.name",
        )
    return namespaced_key(namespace_or_default(obj), name)


def object_key(obj: Mapping[str, Any]) -> str:
    """The key of any object: its name for a cluster-scoped kind, else :func:`key_of`.

    The scope is read from ``kind``; an object without one is taken to be namespaced.

    Raises:
        ObjectValidationError: the object has no ``metadata.name`` string.
    """
    if obj.get("kind") in CLUSTER_SCOPED_KINDS:
        name = (obj.get("metadata") or {}).get("name")
        if isinstance(name, str) and name:
            return name
    return key_of(obj)


def klog_kobj(obj: Mapping[str, Any]) -> str:
    """klog's ``KObj`` display form: ``namespace/name``, or just the name without a namespace.

    For messages that quote upstream's wording only; keys are :func:`object_key`'s.
    """
    metadata = obj.get("metadata") or {}
    namespace, name = metadata.get("namespace") or "", str(metadata.get("name", ""))
    return f"{namespace}/{name}" if namespace else name


# -- names and UIDs for objects written without them --------------------------------------------

_SUFFIX_ALPHABET: Final = (
    "bcdfghjklmnpqrstvwxz2456789"  # what apimachinery's rand.String draws from
)
_SUFFIX_LENGTH: Final = 5
MAX_GENERATED_NAME_LENGTH: Final = 63 - _SUFFIX_LENGTH
"""apiserver's ``names.MaxGeneratedNameLength``: a ``generateName`` prefix is cut to this."""
_UID_NAMESPACE: Final = uuid.UUID("8d5f7ac2-5e4f-4b0c-9a55-3d0b3c7a1f10")


def safe_encode(text: str) -> str:
    """apimachinery's ``rand.SafeEncodeString``: each byte mapped into the suffix alphabet."""
    return "".join(_SUFFIX_ALPHABET[b % len(_SUFFIX_ALPHABET)] for b in text.encode())


def name_suffix(seed: str) -> str:
    """Five characters of apimachinery's ``rand.String`` alphabet, derived from ``seed``.

    The API server draws them at random for ``generateName``; here the same seed gives the
    same suffix, so the same input gives the same run.
    """
    digest = hashlib.blake2b(seed.encode(), digest_size=8).digest()
    return "".join(_SUFFIX_ALPHABET[b % len(_SUFFIX_ALPHABET)] for b in digest[:_SUFFIX_LENGTH])


def generated_name(generate_name: str, seed: str) -> str:
    """The name the API server gives an object created with ``generateName`` (deterministic)."""
    return generate_name[:MAX_GENERATED_NAME_LENGTH] + name_suffix(seed)


def generated_uid(kind: str, namespace: str | None, name: str) -> str:
    """A UID for an object written without one (hand-written manifests).

    A UUID derived from kind, namespace and name: the same object always gets the same UID.
    """
    return str(uuid.uuid5(_UID_NAMESPACE, f"{kind}/{namespace or ''}/{name}"))
