"""Validation of Kubernetes and DRA objects from outside, as the API server would accept them.

It never imports ``store``, the allocator or the snapshots: objects in, errors out.

Objects stay wire-format dicts (:mod:`snapshot.k8s.objects`); the official client models
(``kubernetes`` 37, pydantic v2) are used here only, to check what enters, and by
:func:`as_model` for callers that want a typed object.

Supported kinds (apiVersion ``resource.k8s.io/v1``, or ``v1`` for core kinds):

========================  ===============================  ===================
kind                      model class                      scope
========================  ===============================  ===================
DeviceClass               ``V1DeviceClass``                cluster
ResourceSlice             ``V1ResourceSlice``              cluster
Node                      ``V1Node``                       cluster
ResourceClaimTemplate     ``V1ResourceClaimTemplate``      namespaced
ResourceClaim             ``ResourceV1ResourceClaim``      namespaced
Pod                       ``V1Pod``                        namespaced
DeviceTaintRule           ``V1DeviceTaintRule``            cluster
========================  ===============================  ===================

``resource.k8s.io/v1beta2`` objects are accepted too (and ``v1alpha3`` DeviceTaintRules): they
have the same shape as v1 (``tests/snapshot/ingest/test_conversion.py`` compares the 37.0.2 models
field by field), are validated with their own models (``V1beta2*``, ``V1alpha3DeviceTaintRule``)
and come out of :func:`validate` as ``resource.k8s.io/v1``. Kubernetes 1.36 serves
DeviceTaintRule in ``v1beta2``; ``v1`` is 1.37's. ``v1beta1`` (older shape) is refused here;
:func:`snapshot.ingest.conversion.convert_to_v1` converts it as the API server does.

Field paths in messages are wire paths with list indices and quoted map keys, e.g.
``spec.devices[0].capacity.memory.value`` or ``metadata.labels["kubernetes.io/hostname"]``.

The package: :mod:`~snapshot.validation.engine` (one object through its model),
:mod:`~snapshot.validation.models` (which model for which apiVersion and kind),
:mod:`~snapshot.validation.schema` (the models' wire shape),
:mod:`~snapshot.validation.quantities`, :mod:`~snapshot.validation.messages` (pydantic errors
as sentences), :mod:`~snapshot.validation.api` (the API server's rules past the model:
:mod:`~snapshot.validation.names`, :mod:`~snapshot.validation.slices`,
:mod:`~snapshot.validation.capacity_policies`, :mod:`~snapshot.validation.claims`,
:mod:`~snapshot.validation.core`, with the limits of :mod:`~snapshot.validation.limits` and the
messages of :mod:`~snapshot.validation.problems`; every rule: ``docs/validation.md``) and
:mod:`~snapshot.validation.context` (the prefix of every message).
"""

from __future__ import annotations

from typing import Any

from drasnap.snapshot.k8s.objects import KubeObject

# The engine and the models are imported by the functions that use them: importing the
# kubernetes client is most of a command's start-up (BENCHMARKS.md, design notes), and what
# only needs a limit of this package (the allocator, `validation.limits`) or a generated
# cluster (the presets: built here, never read from outside) must not pay it.

__all__ = ["as_model", "validate"]


def validate(
    obj: object,
    *,
    source: str | None = None,
    warnings: list[str] | None = None,
) -> KubeObject:
    """Validate one object from outside and return its normalised wire form.

    ``obj`` must be a dict with ``apiVersion`` and ``kind`` of a supported kind (see the
    module docstring). It is validated with the official client model, which is strict:
    wrong types are errors (the number ``1.10`` or the boolean ``yes`` where a string is
    expected, a string where an integer is expected) and so are **unknown fields**, including
    python attribute spellings such as ``resource_slice_count`` that the models would accept
    but the API server does not. A simulator should catch a typo like ``nodeNmae`` rather
    than silently ignore it.

    The result is a new dict (the input is never mutated): a deep copy of the input, not the
    model's dump, with these normalisations, each reported as one line appended to
    ``warnings`` (when given; only when validation succeeds):

    - a bare JSON/YAML number in a quantity field (device capacity values, counters,
      capacity requests and policies, consumed capacity, container/pod resources,
      node capacity/allocatable, pod overhead, ...) becomes the quantity string, as the API
      server accepts it: ``100`` -> ``"100"``; quantity strings are checked for syntax;
    - ``resource.k8s.io/v1beta2`` objects come out as ``resource.k8s.io/v1`` (same shape);
    - a namespaced object without ``metadata.namespace`` gets ``"default"``, and a
      cluster-scoped object loses a ``metadata.namespace`` (the API server does both).

    Silently, without a warning: fields set to ``null`` are dropped (the API server treats
    them as absent, and ``kubectl create --dry-run -o yaml`` prints ``creationTimestamp:
    null``), and ``datetime`` objects become RFC 3339 strings such as
    ``"2025-06-01T12:00:00Z"``.

    ``metadata.name`` is required. Labels and annotations must be strings, and names must
    have the format the API server requires (a device name is a DNS label, a driver name a
    DNS subdomain, an attribute name a C identifier with an optional domain, ...: the table
    in :mod:`snapshot.validation.names`). DRA objects and pods must also pass the API server's
    other rules (list sizes, one-of fields, counter sets, request policies, ...), and claims
    and claim templates the allocator's limit of 32 devices per claim; a ``count`` of 0 is
    taken as 1, as the API server defaults it (a note). ``docs/validation.md`` lists every
    rule. Any problem raises :class:`ObjectValidationError`
    whose message names ``source`` (e.g. ``"cluster.yaml doc 2"``), the kind, namespace/name,
    the field path and what was expected; its attributes carry the same parts.
    """
    from drasnap.snapshot.validation.engine import check

    checked = check(obj, source, warnings, build_model=False)
    return checked.obj


def as_model(obj: object, *, source: str | None = None) -> Any:
    """The typed kubernetes client model of a wire object (for its own apiVersion).

    ``ResourceV1ResourceClaim`` for a v1 ResourceClaim, ``V1beta2ResourceSlice`` for a
    v1beta2 slice, ``V1Pod`` for a pod, and so on. The object is validated and normalised
    exactly as by :func:`validate` (use ``as_model(validate(obj))`` to get the v1 model of a
    v1beta2 object). Raises :class:`ObjectValidationError` when it is invalid.
    """
    from drasnap.snapshot.validation.engine import check

    checked = check(obj, source, None, build_model=True)
    return checked.model
