"""Loading Kubernetes manifests as people have them: kubectl dumps and the files drivers ship.

Accepted input, per file (:mod:`snapshot.ingest.reader`): multi-document YAML (empty
documents skipped), JSON (files ending in ``.json``), ``kind: List`` documents as ``kubectl get
-o yaml/json`` writes them, and typed lists such as ``ResourceSliceList`` (whose items usually
carry no ``apiVersion``/``kind``, then taken from the list).

What happens to each object:

- the kinds of a snapshot (DeviceClass, ResourceSlice, DeviceTaintRule, Node,
  ResourceClaimTemplate, ResourceClaim, Pod) are validated (:mod:`snapshot.validation`) and
  kept; ``resource.k8s.io`` objects of the other versions Kubernetes 1.36 serves are converted
  to ``v1`` (:mod:`snapshot.ingest.conversion`);
- a pod without ``metadata.uid`` gets one derived from its namespace and name
  (:func:`snapshot.k8s.kinds.generated_uid`), so the same input gives the same run;
- Deployments, ReplicaSets, StatefulSets and Jobs are validated and become the pending pods
  their controllers would create (:mod:`snapshot.controllers.workloads`), after every file is read
  (pods
  already in the input that a workload controls count as created);
- any other kind (Namespace, ServiceAccount, ConfigMap, Service, RBAC, CRDs...) is skipped,
  or refused when ``strict=True``; a kind that looks like a misspelt supported one
  (``ResourceClame``) is always refused.

Each of these leaves one line in :attr:`Manifests.notes`, starting with the file and document::

    demo.yaml doc 1: skipped Namespace gpu-test1 (v1): not used by the simulation
    demo.yaml doc 2: ResourceClaimTemplate gpu-test1/single-gpu: resource.k8s.io/v1beta1 \
converted to resource.k8s.io/v1
    demo.yaml doc 3: Deployment gpu-test4/pod: 4 pending pods, as its controller would create \
them: pod-5d8ctd7r4q-b2x7z, pod-5d8ctd7r4q-x4wzq, pod-5d8ctd7r4q-l9vbm, ...

as do normalisations (``status.capacity.cpu: number 16 taken as quantity "16"``). A pod's
generated UID leaves none: the API server assigns UIDs too.
"""

from __future__ import annotations

import difflib
import os
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any, Final

import orjson
from drasnap.snapshot.controllers.workloads import (
    WORKLOAD_KINDS,
    Workload,
    pending_pods,
    validate_workload,
)
from drasnap.snapshot.errors import ManifestError, ObjectValidationError
from drasnap.snapshot.ingest.conversion import SERVED_VERSIONS, convert_to_v1
from drasnap.snapshot.ingest.limits import read_input
from drasnap.snapshot.ingest.reader import MANIFEST_SUFFIXES, manifest_files, read_documents
from drasnap.snapshot.k8s.kinds import (
    CLAIM_KIND,
    CLAIM_TEMPLATE_KIND,
    CLASS_KIND,
    DRA_GROUP,
    KINDS,
    NODE_KIND,
    POD_KIND,
    SLICE_KIND,
    TAINT_RULE_KIND,
    generated_uid,
    is_namespaced,
    object_key,
)
from drasnap.snapshot.k8s.objects import KubeObject, format_label, identity_of, kind_of, quote
from drasnap.snapshot.validation import validate

__all__ = ["MANIFEST_SUFFIXES", "Manifests", "load_manifests", "parse_manifests"]

_KIND_FIELDS: Final[dict[str, str]] = {
    CLASS_KIND: "classes",
    SLICE_KIND: "slices",
    TAINT_RULE_KIND: "taint_rules",
    NODE_KIND: "nodes",
    CLAIM_TEMPLATE_KIND: "claim_templates",
    CLAIM_KIND: "claims",
    POD_KIND: "pods",
}
# API groups whose kinds of these names are the ones drasnap reads; the same name in another
# group (a CRD) is another kind. "extensions" held Deployments and ReplicaSets long ago.
_OUR_GROUPS: Final = frozenset({"", "apps", "batch", "extensions", DRA_GROUP})
_OUR_KINDS: Final = frozenset(_KIND_FIELDS) | frozenset(WORKLOAD_KINDS)
# Skipped kinds whose absence changes what the simulation computes: the note says how.
_SKIPPED_EFFECT: Final[dict[str, str]] = {
    "LimitRange": "its default requests and limits are not applied to pods",
    "DaemonSet": "its pods are not created",
    "CronJob": "its Jobs are not created",
    "PodGroup": "gang scheduling is not simulated",
    "PriorityClass": "pod priorities and preemption are not simulated",
    "PodDisruptionBudget": "disruption budgets are not checked",
    "ResourceQuota": "quotas are not checked",
}


@dataclass
class Manifests:
    """Validated objects grouped by kind; each list keeps file order.

    Iterating yields all objects in dependency order (classes, slices, taint rules, nodes,
    claim templates, claims, pods). ``pods`` holds the pods written out, then those made for
    ``workloads`` (the validated Deployments, ReplicaSets, StatefulSets and Jobs). ``notes``
    holds one line per object skipped, converted or expanded, and per normalisation (module
    docstring). ``sources`` maps ``(kind, object_key)`` to where the object was read
    (``"path doc N"``, ``"path doc N items[i]"``, ``"path doc N (Deployment ns/d, pod 1 of
    2)"``).
    """

    classes: list[KubeObject] = field(default_factory=list)
    slices: list[KubeObject] = field(default_factory=list)
    taint_rules: list[KubeObject] = field(default_factory=list)
    nodes: list[KubeObject] = field(default_factory=list)
    claim_templates: list[KubeObject] = field(default_factory=list)
    claims: list[KubeObject] = field(default_factory=list)
    pods: list[KubeObject] = field(default_factory=list)
    workloads: list[KubeObject] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    sources: dict[tuple[str, str], str] = field(default_factory=dict)

    def add(self, obj: KubeObject, source: str | None = None) -> None:
        """Add one **validated** object. Two objects of the same kind and key are an error."""
        kind = kind_of(obj)
        key = (kind, object_key(obj))
        if key in self.sources:
            first = self.sources[key]
            where = f"{source}: " if source else ""
            raise ManifestError(
                f"{where}{kind} {key[1]} is defined twice (first in {first})",
                source=source,
                kind=kind,
                namespace=obj["metadata"].get("namespace"),
                name=obj["metadata"]["name"],
            )
        self.of_kind(kind).append(obj)
        self.sources[key] = source or "<unknown source>"

    def of_kind(self, kind: str) -> list[KubeObject]:
        """The list holding objects of ``kind`` (``KeyError`` for an unsupported kind)."""
        objects: list[KubeObject] = getattr(self, _KIND_FIELDS[kind])
        return objects

    def by_kind(self) -> dict[str, list[KubeObject]]:
        """``{kind: objects}`` for every supported kind, in dependency order."""
        return {kind: self.of_kind(kind) for kind in KINDS}

    def __iter__(self) -> Iterator[KubeObject]:
        for kind in KINDS:
            yield from self.of_kind(kind)

    def __len__(self) -> int:
        return sum(len(self.of_kind(kind)) for kind in KINDS)


def load_manifests(
    paths_or_dirs: str | os.PathLike[str] | Iterable[str | os.PathLike[str]],
    *,
    strict: bool = False,
    warnings: list[str] | None = None,
) -> Manifests:
    """Read every object in the given files and directories (module docstring).

    Directories are walked recursively in sorted path order, picking up files ending in
    ``.yaml``, ``.yml`` or ``.json``; hidden files and directories are skipped. A file named
    explicitly is read whatever its name: as JSON if it ends in ``.json``, else as YAML.

    Kinds the simulation does not use are skipped with a note; ``strict=True`` refuses them
    instead (``drasnap simulate --strict``). The notes are on the result
    (:attr:`Manifests.notes`) and, when ``warnings`` is given, appended to it as well.

    Errors: a path that does not exist, an unreadable file, bad YAML/JSON (naming the file
    and line), or a document that is not a mapping raise :class:`ManifestError`; an invalid
    object raises :class:`ObjectValidationError` (``ManifestError`` is a subclass of it, so
    catching that one catches both), its message starting with the file and document
    (``"cluster.yaml doc 2: ResourceSlice node-a: spec.driver: required field is missing"``).
    Documents are counted from 1, list items from 0 (``"doc 1 items[3]"``). The same kind and
    namespace/name twice is an error.
    """
    loader = _Loader(strict)
    for path in manifest_files(paths_or_dirs, loader.manifests.notes):
        data = read_input(path)
        loader.read(data, str(path), as_json=path.suffix.lower() == ".json")
    return loader.finish(warnings)


def parse_manifests(
    text: str | bytes,
    *,
    source: str = "<string>",
    strict: bool = False,
    warnings: list[str] | None = None,
) -> Manifests:
    """Like :func:`load_manifests` for manifest text (YAML, or JSON which YAML also reads).

    Text starting with ``{`` is tried as JSON first (much faster than YAML for big dumps).
    ``source`` names the text in messages.
    """
    data = text.encode() if isinstance(text, str) else text
    as_json = data.lstrip(b"\xef\xbb\xbf \t\r\n").startswith(b"{")
    if as_json:
        try:
            orjson.loads(data.removeprefix(b"\xef\xbb\xbf"))
        except orjson.JSONDecodeError:
            as_json = False  # e.g. a YAML flow mapping
    loader = _Loader(strict)
    loader.read(data, source, as_json=as_json)
    return loader.finish(warnings)


# --------------------------------------------------------------------------------------------


class _Loader:
    """Sorts the objects of one load: kept, converted, expanded later, or skipped."""

    def __init__(self, strict: bool) -> None:
        self.manifests = Manifests()
        self.strict = strict
        self.workloads: list[Workload] = []

    def read(self, data: bytes, source: str, *, as_json: bool) -> None:
        for where, obj in read_documents(data, source, as_json=as_json):
            self.take(obj, where)

    def take(self, obj: Any, where: str) -> None:
        notes = self.manifests.notes
        if not isinstance(obj, dict) or not _is_ours(obj):
            if isinstance(obj, dict) and isinstance(obj.get("kind"), str) and obj["kind"]:
                self.skip(obj, where)
                return
            validate(obj, source=where)  # reports what is missing or wrong
            return  # pragma: no cover - validate raised
        kind = obj["kind"]
        if kind in WORKLOAD_KINDS:
            checked = validate_workload(obj, source=where, warnings=notes)
            key = (kind, object_key(checked))
            first = self.manifests.sources.get(key)
            if first is not None:
                raise ManifestError(
                    f"{where}: {kind} {key[1]} is defined twice (first in {first})",
                    source=where,
                    kind=kind,
                    namespace=checked["metadata"]["namespace"],
                    name=checked["metadata"]["name"],
                )
            self.manifests.sources[key] = where
            self.workloads.append(Workload(checked, where))
            self.manifests.workloads.append(checked)
            return
        if kind in SERVED_VERSIONS:
            checked = convert_to_v1(obj, source=where, warnings=notes)
        else:
            checked = validate(obj, source=where, warnings=notes)
        if kind == POD_KIND and not checked["metadata"].get("uid"):
            metadata = checked["metadata"]
            metadata["uid"] = generated_uid(POD_KIND, metadata["namespace"], metadata["name"])
        self.manifests.add(checked, where)

    def skip(self, obj: dict[str, Any], where: str) -> None:
        kind: str = obj["kind"]
        _, namespace, name = identity_of(obj)
        label = format_label(kind, namespace, name)
        api_version = obj.get("apiVersion")
        shown_version = api_version if isinstance(api_version, str) else "no apiVersion"
        close = difflib.get_close_matches(kind.lower(), [k.lower() for k in _OUR_KINDS], 1, 0.85)
        if close and kind not in _OUR_KINDS:
            meant = next(k for k in _OUR_KINDS if k.lower() == close[0])
            raise _error(
                f"unknown kind {quote(kind)} ({shown_version}); did you mean {quote(meant)}?",
                where,
                obj,
            )
        if self.strict:
            raise _error(
                f"kind {kind} ({shown_version}) is not used by the simulation; strict mode "
                "refuses it (without strict it is skipped with a note)",
                where,
                obj,
            )
        effect = _SKIPPED_EFFECT.get(kind)
        why = f" ({effect})" if effect else ""
        self.manifests.notes.append(
            f"{where}: skipped {label} ({shown_version}): not used by the simulation{why}"
        )

    def finish(self, warnings: list[str] | None) -> Manifests:
        manifests = self.manifests
        if self.workloads:
            for pod, where in pending_pods(self.workloads, manifests.pods, manifests.notes):
                manifests.add(pod, where)
        if warnings is not None:
            warnings.extend(manifests.notes)
        return manifests


def _is_ours(obj: dict[str, Any]) -> bool:
    """Whether ``obj`` is of a kind drasnap reads (in some version of its API group)."""
    kind, api_version = obj.get("kind"), obj.get("apiVersion")
    if kind not in _OUR_KINDS:
        return False
    if not isinstance(api_version, str):
        return True  # validation reports the missing apiVersion
    group = api_version.rpartition("/")[0]
    return group in _OUR_GROUPS


def _error(what: str, where: str, obj: dict[str, Any]) -> ObjectValidationError:
    kind, namespace, name = identity_of(obj)
    shown_namespace = namespace if is_namespaced(kind) else None
    label = format_label(kind or "<unknown kind>", shown_namespace, name)
    return ObjectValidationError(
        f"{where}: {label}: {what}",
        source=where,
        kind=kind,
        namespace=shown_namespace,
        name=name,
        field="kind",
    )
