"""Names replaced by stable pseudonyms, so a capture can be shared (``--redact``).

Replaced: the names of namespaces, pods, nodes, claims, claim templates, workloads, containers
and images wherever they appear (``metadata``, ``spec.nodeName``, owner references, a claim's
``reservedFor``, a pod's claim statuses, a slice's ``nodeName`` and pool name, node selectors on
``kubernetes.io/hostname``), label and annotation values (keys stay, and
``kubernetes.io/os``/``arch`` values), opaque driver configs (their ``parameters`` become
``{}``), and UIDs. Kept: device, driver, DeviceClass, attribute and capacity names and values,
since the allocation depends on them. Label values a selector of the same input matches (a pod's
``nodeSelector``, affinity terms, workload selectors) are pseudonymised the same way, so they
still match; node group names become pseudonyms, and the priority expander's ConfigMap (regular
expressions of them) is emptied, with a warning.

A pseudonym is ``<prefix>-<10 hex digits>`` of an HMAC-SHA256 of the original under a key
(:class:`Redactor`'s ``key``, ``$DRASNAP_REDACT_KEY``, else a fixed one: the same key, the same
pseudonyms; with the fixed key anyone can confirm a guessed name, so set a secret key when names
are guessable). :meth:`Redactor.table` is the translation table: pseudonym -> original, written
beside the capture, never in it.
"""

from __future__ import annotations

import hashlib
import hmac
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Final

import orjson

__all__ = ["Redactor"]

_PREFIX: Final = {
    "namespace": "ns",
    "node": "node",
    "pod": "pod",
    "claim": "claim",
    "template": "tmpl",
    "workload": "wl",
    "object": "obj",
    "label": "v",
    "uid": "uid",
    "pool": "pool",
    "slice": "slice",
}
# Label values kept as they are: a few well-known ones that name no one.
_KEPT_LABEL_KEYS: Final = frozenset({"kubernetes.io/os", "kubernetes.io/arch"})
_KEPT_ANNOTATIONS: Final = frozenset(
    {"cluster-autoscaler.kubernetes.io/safe-to-evict", "kubernetes.io/config.mirror"}
)
_HOSTNAME: Final = "kubernetes.io/hostname"
_WORKLOADS: Final = frozenset({"Deployment", "ReplicaSet", "StatefulSet", "Job", "DaemonSet"})


class Redactor:
    """Pseudonyms for one capture or export (module docstring)."""

    def __init__(self, key: bytes | None = None) -> None:
        if key is None:
            key = os.environ.get("DRASNAP_REDACT_KEY", "drasnap-redact").encode()
        self.key = key
        self._table: dict[str, str] = {}
        self.warnings: list[str] = []

    def table(self) -> dict[str, str]:
        """pseudonym -> original, sorted by pseudonym."""
        return dict(sorted(self._table.items()))

    def write_table(self, path: Path) -> None:
        """Write :meth:`table` to ``path`` as indented JSON (beside the capture, never in it)."""
        path.write_bytes(orjson.dumps(self.table(), option=orjson.OPT_INDENT_2))

    def name(self, what: str, original: str) -> str:
        if not original:
            return original
        digest = hmac.new(self.key, f"{what}\0{original}".encode(), hashlib.sha256).hexdigest()
        pseudonym = f"{_PREFIX[what]}-{digest[:10]}"
        self._table[pseudonym] = original
        return pseudonym

    # ---------------------------------------------------------------------------------------

    def redact(self, kind: str, obj: Mapping[str, Any]) -> dict[str, Any]:
        """A redacted copy of ``obj`` (a wire-format object of ``kind``)."""
        out: dict[str, Any] = _copy(obj)
        meta = out.get("metadata")
        if isinstance(meta, dict):
            self._metadata(kind, meta)
        spec = out.get("spec")
        status = out.get("status")
        if kind == "Node":
            if isinstance(spec, dict):
                spec.pop("providerID", None)
                spec.pop("podCIDR", None)
                spec.pop("podCIDRs", None)
            if isinstance(status, dict):
                status.pop("addresses", None)
                status.pop("images", None)
                status.pop("nodeInfo", None)
        elif kind == "Pod":
            if isinstance(spec, dict):
                self._pod_spec(spec)
            if isinstance(status, dict):
                for entry in status.get("resourceClaimStatuses") or ():
                    if isinstance(entry, dict) and entry.get("resourceClaimName"):
                        entry["resourceClaimName"] = self.name("claim", entry["resourceClaimName"])
                for field in ("podIP", "podIPs", "hostIP", "hostIPs", "message"):
                    status.pop(field, None)
        elif kind in _WORKLOADS:
            if isinstance(spec, dict):
                self._workload_spec(spec)
        elif kind == "ResourceSlice":
            if isinstance(spec, dict):
                if spec.get("nodeName"):
                    spec["nodeName"] = self.name("node", spec["nodeName"])
                pool = spec.get("pool")
                if isinstance(pool, dict) and pool.get("name"):
                    pool["name"] = self.name("pool", pool["name"])
                self._node_selector(spec.get("nodeSelector"))
                for device in spec.get("devices") or ():
                    if isinstance(device, dict):
                        self._node_selector(device.get("nodeSelector"))
                        if device.get("nodeName"):
                            device["nodeName"] = self.name("node", device["nodeName"])
        elif kind == "ResourceClaimTemplate":
            if isinstance(spec, dict):
                inner = spec.get("metadata")
                if isinstance(inner, dict):
                    self._labels(inner)
                self._claim_spec(spec.get("spec"))
        elif kind == "ResourceClaim":
            self._claim_spec(spec)
            if isinstance(status, dict):
                self._claim_status(status)
        elif kind == "DeviceTaintRule":
            selector = spec.get("deviceSelector") if isinstance(spec, dict) else None
            if isinstance(selector, dict) and selector.get("pool"):
                selector["pool"] = self.name("pool", selector["pool"])
        elif kind == "ConfigMap" and out.get("data"):
            # The priority expander's priorities are regular expressions of node group names,
            # which are pseudonyms now: they cannot be translated, so they are dropped.
            out["data"] = {}
            self.warnings.append(
                "--redact: the priority expander's ConfigMap names node groups by regular "
                "expression; its data is left out of the redacted capture"
            )
        return out

    def _metadata(self, kind: str, meta: dict[str, Any]) -> None:
        what = {
            "Namespace": "namespace",
            "Node": "node",
            "Pod": "pod",
            "ResourceClaim": "claim",
            "ResourceClaimTemplate": "template",
            "ResourceSlice": "slice",
        }.get(kind, "workload" if kind in _WORKLOADS else None)
        if what is not None and meta.get("name"):
            meta["name"] = self.name(what, meta["name"])
        if meta.get("generateName"):
            meta["generateName"] = self.name(what or "object", meta["generateName"]) + "-"
        if meta.get("namespace"):
            meta["namespace"] = self.name("namespace", meta["namespace"])
        if meta.get("uid"):
            meta["uid"] = self.name("uid", meta["uid"])
        for field in ("managedFields", "selfLink"):
            meta.pop(field, None)
        self._labels(meta)
        for owner in meta.get("ownerReferences") or ():
            if isinstance(owner, dict):
                if owner.get("name"):
                    owner_kind = owner.get("kind")
                    owner_what = "workload" if owner_kind in _WORKLOADS else "object"
                    if owner_kind == "Node":
                        owner_what = "node"
                    owner["name"] = self.name(owner_what, owner["name"])
                if owner.get("uid"):
                    owner["uid"] = self.name("uid", owner["uid"])

    def _labels(self, meta: dict[str, Any]) -> None:
        labels = meta.get("labels")
        if isinstance(labels, dict):
            meta["labels"] = {k: self._label_value(k, v) for k, v in labels.items()}
        annotations = meta.get("annotations")
        if isinstance(annotations, dict):
            meta["annotations"] = {
                k: (v if k in _KEPT_ANNOTATIONS else self.name("label", str(v)))
                for k, v in annotations.items()
            }

    def _label_value(self, key: str, value: Any) -> Any:
        if key in _KEPT_LABEL_KEYS or not isinstance(value, str) or not value:
            return value
        if key == _HOSTNAME:
            return self.name("node", value)
        return self.name("label", value)

    def _match_labels(self, selector: Any) -> None:
        if not isinstance(selector, dict):
            return
        labels = selector.get("matchLabels")
        if isinstance(labels, dict):
            selector["matchLabels"] = {k: self._label_value(k, v) for k, v in labels.items()}
        for expression in selector.get("matchExpressions") or ():
            self._requirement(expression)

    def _requirement(self, expression: Any) -> None:
        if isinstance(expression, dict) and isinstance(expression.get("values"), list):
            key = str(expression.get("key", ""))
            if expression.get("operator") not in ("Gt", "Lt"):
                expression["values"] = [self._label_value(key, v) for v in expression["values"]]

    def _node_selector(self, selector: Any) -> None:
        if not isinstance(selector, dict):
            return
        for term in selector.get("nodeSelectorTerms") or ():
            if isinstance(term, dict):
                for expression in term.get("matchExpressions") or ():
                    self._requirement(expression)
                for expression in term.get("matchFields") or ():
                    if isinstance(expression, dict) and expression.get("key") == "metadata.name":
                        expression["values"] = [
                            self.name("node", v) for v in expression.get("values") or ()
                        ]

    def _pod_spec(self, spec: dict[str, Any]) -> None:
        if spec.get("nodeName"):
            spec["nodeName"] = self.name("node", spec["nodeName"])
        for field in ("serviceAccountName", "serviceAccount", "priorityClassName", "hostname",
                      "subdomain", "schedulerName"):  # fmt: skip
            if isinstance(spec.get(field), str) and spec[field] not in ("", "default-scheduler"):
                spec[field] = self.name("object", spec[field])
        selector = spec.get("nodeSelector")
        if isinstance(selector, dict):
            spec["nodeSelector"] = {k: self._label_value(k, v) for k, v in selector.items()}
        affinity = spec.get("affinity")
        if isinstance(affinity, dict):
            node_affinity = affinity.get("nodeAffinity")
            if isinstance(node_affinity, dict):
                self._node_selector(
                    node_affinity.get("requiredDuringSchedulingIgnoredDuringExecution")
                )
                for term in (
                    node_affinity.get("preferredDuringSchedulingIgnoredDuringExecution") or ()
                ):
                    if isinstance(term, dict) and isinstance(term.get("preference"), dict):
                        for expression in term["preference"].get("matchExpressions") or ():
                            self._requirement(expression)
            for field in ("podAffinity", "podAntiAffinity"):
                block = affinity.get(field)
                if isinstance(block, dict):
                    for terms in block.values():
                        for term in terms or ():
                            inner = (
                                term.get("podAffinityTerm", term)
                                if isinstance(term, dict)
                                else None
                            )
                            if isinstance(inner, dict):
                                self._match_labels(inner.get("labelSelector"))
                                if isinstance(inner.get("namespaces"), list):
                                    inner["namespaces"] = [
                                        self.name("namespace", n) for n in inner["namespaces"]
                                    ]
        for constraint in spec.get("topologySpreadConstraints") or ():
            if isinstance(constraint, dict):
                self._match_labels(constraint.get("labelSelector"))
        for claim in spec.get("resourceClaims") or ():
            if isinstance(claim, dict):
                if claim.get("resourceClaimName"):
                    claim["resourceClaimName"] = self.name("claim", claim["resourceClaimName"])
                if claim.get("resourceClaimTemplateName"):
                    claim["resourceClaimTemplateName"] = self.name(
                        "template", claim["resourceClaimTemplateName"]
                    )
        for field in ("containers", "initContainers"):
            for container in spec.get(field) or ():
                if isinstance(container, dict):
                    if container.get("name"):
                        container["name"] = self.name("object", container["name"])
                    container.pop("env", None)
                    container.pop("envFrom", None)
                    container.pop("command", None)
                    container.pop("args", None)
                    if container.get("image"):
                        container["image"] = self.name("object", container["image"])
        if isinstance(spec.get("volumes"), list):
            spec["volumes"] = [self._volume(v) for v in spec["volumes"] if isinstance(v, dict)]

    def _volume(self, volume: dict[str, Any]) -> dict[str, Any]:
        # Local storage blocks scale-down (upstream's drain rules): its kind is kept, names not.
        out: dict[str, Any] = {"name": self.name("object", str(volume.get("name", "")))}
        if "emptyDir" in volume:
            out["emptyDir"] = {}
        elif "hostPath" in volume:
            out["hostPath"] = {"path": "/" + self.name("object", str(volume["hostPath"]))}
        elif "persistentVolumeClaim" in volume:
            claim = volume["persistentVolumeClaim"] or {}
            out["persistentVolumeClaim"] = {
                "claimName": self.name("object", str(claim.get("claimName", "")))
            }
        else:
            out["configMap"] = {"name": self.name("object", str(volume.get("name", "")))}
        return out

    def _workload_spec(self, spec: dict[str, Any]) -> None:
        self._match_labels(spec.get("selector"))
        template = spec.get("template")
        if isinstance(template, dict):
            meta = template.get("metadata")
            if isinstance(meta, dict):
                self._labels(meta)
                if meta.get("name"):
                    meta["name"] = self.name("pod", meta["name"])
            if isinstance(template.get("spec"), dict):
                self._pod_spec(template["spec"])
        if spec.get("serviceName"):
            spec["serviceName"] = self.name("object", spec["serviceName"])

    def _claim_spec(self, spec: Any) -> None:
        if not isinstance(spec, dict):
            return
        devices = spec.get("devices")
        if isinstance(devices, dict):
            for config in devices.get("config") or ():
                opaque = config.get("opaque") if isinstance(config, dict) else None
                if isinstance(opaque, dict):
                    opaque["parameters"] = {}

    def _claim_status(self, status: dict[str, Any]) -> None:
        for entry in status.get("reservedFor") or ():
            if isinstance(entry, dict):
                if entry.get("name"):
                    what = "pod" if entry.get("resource") == "pods" else "object"
                    entry["name"] = self.name(what, entry["name"])
                if entry.get("uid"):
                    entry["uid"] = self.name("uid", entry["uid"])
        allocation = status.get("allocation")
        if isinstance(allocation, dict):
            self._node_selector(allocation.get("nodeSelector"))
            results = (allocation.get("devices") or {}).get("results") or ()
            for result in results:
                if isinstance(result, dict) and result.get("pool"):
                    result["pool"] = self.name("pool", result["pool"])
            for config in (allocation.get("devices") or {}).get("config") or ():
                opaque = config.get("opaque") if isinstance(config, dict) else None
                if isinstance(opaque, dict):
                    opaque["parameters"] = {}
        for device in status.get("devices") or ():
            if isinstance(device, dict):
                if device.get("pool"):
                    device["pool"] = self.name("pool", device["pool"])
                device.pop("networkData", None)
                device.pop("data", None)


def _copy(value: Any) -> Any:
    if isinstance(value, Mapping):
        return {k: _copy(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_copy(v) for v in value]
    return value
