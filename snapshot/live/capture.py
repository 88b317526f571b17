"""A live cluster's objects, listed through the official kubernetes client, as ``--from`` files.

:func:`capture` lists every kind the simulations read (:data:`CAPTURED_KINDS`), each in pages of
``page_size`` objects (``limit``/``continue``, as kubectl does); an expired continue token (410
Gone) restarts that kind's list from its first page. Before listing, it reads the API server's
discovery documents for ``resource.k8s.io`` and lists each DRA kind in the newest version both
the server and drasnap serve; objects of older versions are converted to ``v1`` as ``--from``
converts them (:func:`snapshot.ingest.conversion.convert_to_v1`). A cluster that serves no DRA
API is said so in a note, and the other kinds are captured.

A capture is not one atomic snapshot: each kind is listed at its own ``resourceVersion``. After
the lists, a second pass watches each kind from the version it was listed at (a short watch,
``timeoutSeconds``); a kind that changed meanwhile is named in :attr:`Capture.changed`.

It only ever sends GET requests (list, watch, discovery): a capture never writes to the cluster.
A 403 raises :class:`ForbiddenError`, naming the verb and resource, with the ClusterRole that
would allow the whole capture (:func:`cluster_role`).

It imports ``kubernetes`` only; it never imports ``store``.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final

from drasnap.snapshot.errors import ApiError, CaptureError, ForbiddenError
from drasnap.snapshot.ingest.conversion import SERVED_VERSIONS, convert_to_v1
from drasnap.snapshot.k8s.kinds import (
    CLAIM_KIND,
    CLAIM_TEMPLATE_KIND,
    CLASS_KIND,
    DRA_API_VERSION,
    DRA_GROUP,
    NODE_KIND,
    POD_KIND,
    SLICE_KIND,
    TAINT_RULE_KIND,
)

# The errors live in snapshot.errors' tree; they are named here too, as the capture's.
__all__ = [
    "CAPTURED_KINDS",
    "PRIORITY_CONFIGMAP",
    "ApiError",
    "Capture",
    "CaptureError",
    "ForbiddenError",
    "KindCapture",
    "LiveKind",
    "RawClient",
    "capture",
    "cluster_role",
    "dra_versions",
    "forbidden",
    "list_kind",
    "resource_path",
    "to_v1",
]

PRIORITY_CONFIGMAP: Final = "cluster-autoscaler-priority-expander"
"""The priority expander's ConfigMap: the only ConfigMap a capture lists (by name)."""

_RESTARTS: Final = 5  # 410s in a row before a kind's list is given up


@dataclass(frozen=True)
class LiveKind:
    """One kind as the API server serves it: group, plural resource, scope."""

    kind: str
    group: str  # "" for the core group
    version: str  # the version listed when the group is not resource.k8s.io
    resource: str
    namespaced: bool
    field_selector: str | None = None

    @property
    def api_version(self) -> str:
        return f"{self.group}/{self.version}" if self.group else self.version

    def qualified(self) -> str:
        """``resourceslices.resource.k8s.io``, ``pods`` (as RBAC and kubectl name them)."""
        return f"{self.resource}.{self.group}" if self.group else self.resource


CAPTURED_KINDS: Final[tuple[LiveKind, ...]] = (
    LiveKind(CLASS_KIND, DRA_GROUP, "v1", "deviceclasses", False),
    LiveKind(SLICE_KIND, DRA_GROUP, "v1", "resourceslices", False),
    LiveKind(TAINT_RULE_KIND, DRA_GROUP, "v1", "devicetaintrules", False),
    LiveKind(NODE_KIND, "", "v1", "nodes", False),
    LiveKind(CLAIM_TEMPLATE_KIND, DRA_GROUP, "v1", "resourceclaimtemplates", True),
    LiveKind(CLAIM_KIND, DRA_GROUP, "v1", "resourceclaims", True),
    LiveKind(POD_KIND, "", "v1", "pods", True),
    LiveKind("Deployment", "apps", "v1", "deployments", True),
    LiveKind("ReplicaSet", "apps", "v1", "replicasets", True),
    LiveKind("StatefulSet", "apps", "v1", "statefulsets", True),
    LiveKind("Job", "batch", "v1", "jobs", True),
    LiveKind("ConfigMap", "", "v1", "configmaps", True, f"metadata.name={PRIORITY_CONFIGMAP}"),
)
"""What a capture lists, in the order ``--from`` reads it."""


class RawClient:
    """GET requests as JSON through a ``kubernetes.client.ApiClient`` (its authentication,
    TLS and proxy settings), never deserialised into models (the objects stay wire-format)."""

    def __init__(self, api_client: Any, *, timeout: float = 60.0) -> None:
        self.api = api_client
        self.timeout = timeout

    def _call(self, path: str, query: Sequence[tuple[str, Any]], timeout: Any) -> Any:
        """The raw urllib3 response of ``GET path?query`` (status checked)."""
        from kubernetes.client.exceptions import ApiException

        try:
            method, url, headers, _body, _ = self.api.param_serialize(
                "GET",
                path,
                query_params=list(query),
                header_params={"Accept": "application/json"},
                auth_settings=["BearerToken"],
            )
            response = self.api.call_api(
                method, url, header_params=headers, _request_timeout=timeout
            )
        except ApiException as exc:
            raise _api_error(path, exc.status or 0, exc.reason or "", exc.body) from None
        except OSError as exc:  # urllib3's connection errors are OSErrors
            raise CaptureError(f"cannot reach the API server for GET {path}: {exc}") from None
        except Exception as exc:  # urllib3.exceptions.* (MaxRetryError is not an OSError)
            if type(exc).__module__.startswith("urllib3"):
                raise CaptureError(f"cannot reach the API server for GET {path}: {exc}") from None
            raise
        raw = response.response
        if response.status >= 400:
            data = raw.data
            raw.release_conn()
            raise _api_error(path, response.status, response.reason or "", data)
        return raw

    def get(self, path: str, query: Sequence[tuple[str, Any]] = ()) -> Any:
        """The decoded JSON of ``GET path?query``."""
        response = self._call(path, query, self.timeout)
        data = response.data
        response.release_conn()
        try:
            return json.loads(data)
        except ValueError:
            raise CaptureError(f"GET {path}: the API server's answer is not JSON") from None

    def watch(self, path: str, query: Sequence[tuple[str, Any]], timeout: float) -> Iterator[Any]:
        """The events of a watch (``{"type", "object"}`` per line) until the server ends it."""
        response = self._call(
            path, [*query, ("watch", "true")], (self.timeout, timeout + self.timeout)
        )
        try:
            pending = b""
            for chunk in response.stream(amt=65536, decode_content=True):
                pending += chunk
                *lines, pending = pending.split(b"\n")
                for line in lines:
                    if line.strip():
                        yield json.loads(line)
            if pending.strip():
                yield json.loads(pending)
        finally:
            response.release_conn()


def _api_error(path: str, status: int, reason: str, body: Any) -> ApiError:
    message = ""
    try:
        decoded = json.loads(body) if body else {}
        if isinstance(decoded, Mapping):
            message = str(decoded.get("message") or "")
            reason = str(decoded.get("reason") or reason)
    except (TypeError, ValueError):
        pass
    text = f"GET {path}: {status} {reason}" + (f": {message}" if message else "")
    return ApiError(text, status, reason)


def cluster_role(
    kinds: Sequence[LiveKind] = CAPTURED_KINDS, *, name: str = "drasnap-capture"
) -> str:
    """The ClusterRole (YAML) granting get, list and watch on every captured resource."""
    groups: dict[str, list[str]] = {}
    for kind in kinds:
        groups.setdefault(kind.group, []).append(kind.resource)
    lines = [
        "apiVersion: rbac.authorization.k8s.io/v1",
        "kind: ClusterRole",
        "metadata:",
        f"  name: {name}",
        "rules:",
    ]
    for group, resources in groups.items():
        lines.append(f'- apiGroups: ["{group}"]')
        lines.append(f"  resources: [{', '.join(sorted(resources))}]")
        lines.append("  verbs: [get, list, watch]")
    return "\n".join(lines) + "\n"


def forbidden(error: ApiError, verb: str, kind: LiveKind, namespace: str | None) -> ForbiddenError:
    where = f" in namespace {namespace}" if namespace else ""
    return ForbiddenError(
        f"the API server forbids {verb} {kind.qualified()}{where} (403 Forbidden); drasnap "
        "capture needs get, list and watch on the resources of the ClusterRole printed above",
        verb,
        kind.qualified(),
        cluster_role(),
    )


def dra_versions(client: RawClient) -> dict[str, str] | None:
    """``{resource: version}``: for each DRA resource the server serves, the first version of
    :data:`SERVED_VERSIONS` (newest first) it serves it in. None: no ``resource.k8s.io``."""
    try:
        group = client.get(f"/apis/{DRA_GROUP}")
    except ApiError as exc:
        if exc.status == 404:
            return None
        raise
    served = [v.get("version") for v in group.get("versions") or () if isinstance(v, Mapping)]
    resources: dict[str, set[str]] = {}
    for version in served:
        try:
            listing = client.get(f"/apis/{DRA_GROUP}/{version}")
        except ApiError as exc:
            if exc.status == 404:
                continue
            raise
        for resource in listing.get("resources") or ():
            name = resource.get("name", "") if isinstance(resource, Mapping) else ""
            if "/" not in name and "list" in (resource.get("verbs") or ()):
                resources.setdefault(name, set()).add(str(version))
    chosen: dict[str, str] = {}
    for kind in CAPTURED_KINDS:
        if kind.group != DRA_GROUP:
            continue
        for api_version in SERVED_VERSIONS[kind.kind]:
            version = api_version.rsplit("/", 1)[1]
            if version in resources.get(kind.resource, ()):
                chosen[kind.resource] = version
                break
    return chosen


@dataclass
class KindCapture:
    """One kind's list: its objects (v1, each with ``apiVersion`` and ``kind``) and how."""

    kind: LiveKind
    api_version: str  # the version listed
    resource_version: str = ""
    objects: list[dict[str, Any]] = field(default_factory=list)
    pages: int = 0
    restarts: int = 0  # lists restarted after a 410 Gone continue token
    converted: int = 0

    def summary(self) -> dict[str, Any]:
        return {
            "apiVersion": self.api_version,
            "resourceVersion": self.resource_version,
            "objects": len(self.objects),
            "pages": self.pages,
            "restarts": self.restarts,
            "converted": self.converted,
        }


@dataclass
class Capture:
    """What :func:`capture` listed, per kind, and what it noticed."""

    kinds: list[KindCapture] = field(default_factory=list)
    changed: list[str] = field(default_factory=list)  # kinds changed while the capture ran
    notes: list[str] = field(default_factory=list)
    namespaces: list[str] = field(default_factory=list)  # empty: all


def resource_path(kind: LiveKind, version: str, namespace: str | None) -> str:
    base = f"/apis/{kind.group}/{version}" if kind.group else f"/api/{version}"
    scope = f"/namespaces/{namespace}" if namespace else ""
    return f"{base}{scope}/{kind.resource}"


def list_kind(
    client: RawClient,
    kind: LiveKind,
    version: str,
    namespace: str | None,
    *,
    page_size: int,
    progress: Callable[[str, int], None] | None = None,
    done: int = 0,
) -> tuple[list[dict[str, Any]], str, int, int]:
    """Every object of ``kind`` (in ``namespace``, or all), page by page: (objects as listed,
    the list's resourceVersion, pages, restarts). A 410 on a continue token restarts it."""
    path = resource_path(kind, version, namespace)
    restarts = 0
    while True:
        objects: list[dict[str, Any]] = []
        pages = 0
        token: str | None = None
        resource_version = ""
        try:
            while True:
                query: list[tuple[str, Any]] = [("limit", page_size)]
                if token:
                    query.append(("continue", token))
                if kind.field_selector:
                    query.append(("fieldSelector", kind.field_selector))
                page = client.get(path, query)
                pages += 1
                metadata = page.get("metadata") or {}
                if not token:
                    resource_version = str(metadata.get("resourceVersion") or "")
                objects.extend(page.get("items") or ())
                if progress is not None:
                    progress(kind.kind, done + len(objects))
                token = metadata.get("continue") or None
                if not token:
                    return objects, resource_version, pages, restarts
        except ApiError as exc:
            if exc.status == 403:
                raise forbidden(exc, "list", kind, namespace) from None
            if exc.status == 410 and token and restarts < _RESTARTS:
                restarts += 1
                continue
            raise


def _changed_since(
    client: RawClient, kind: LiveKind, version: str, namespace: str | None, resource_version: str
) -> bool:
    """Whether a watch from ``resource_version`` sees a change (a 410: too old to tell, so
    changed)."""
    if not resource_version:
        return False
    query: list[tuple[str, Any]] = [
        ("resourceVersion", resource_version),
        ("allowWatchBookmarks", "true"),
        ("timeoutSeconds", 1),
    ]
    if kind.field_selector:
        query.append(("fieldSelector", kind.field_selector))
    try:
        for event in client.watch(resource_path(kind, version, namespace), query, 1.0):
            kind_of_event = event.get("type") if isinstance(event, Mapping) else None
            if kind_of_event == "ERROR":
                return True
            if kind_of_event in ("ADDED", "MODIFIED", "DELETED"):
                return True
    except ApiError as exc:
        if exc.status == 403:
            raise forbidden(exc, "watch", kind, namespace) from None
        if exc.status == 410:
            return True
        raise
    return False


def to_v1(
    obj: dict[str, Any], kind: LiveKind, api_version: str, notes: list[str]
) -> dict[str, Any]:
    out = dict(obj)
    out.setdefault("apiVersion", api_version)
    out.setdefault("kind", kind.kind)
    if api_version != DRA_API_VERSION and kind.group == DRA_GROUP:
        converted: dict[str, Any] = dict(
            convert_to_v1(out, source=kind.qualified(), warnings=notes)
        )
        return converted
    return out


def capture(
    client: RawClient,
    *,
    namespaces: Sequence[str] = (),
    page_size: int = 500,
    progress: Callable[[str, int], None] | None = None,
    second_pass: bool = True,
) -> Capture:
    """List every kind of :data:`CAPTURED_KINDS` (module docstring); namespaced kinds only in
    ``namespaces`` when given. Raises :class:`ForbiddenError` for a 403, :class:`CaptureError`
    for anything else the server or the network refuses."""
    result = Capture(namespaces=list(namespaces))
    try:
        versions = dra_versions(client)
    except ApiError as exc:
        if exc.status == 403:
            raise ForbiddenError(
                f"the API server forbids get /apis/{DRA_GROUP} (discovery, 403 Forbidden)",
                "get",
                f"/apis/{DRA_GROUP}",
                cluster_role(),
            ) from None
        raise
    if versions is None:
        result.notes.append(
            f"the cluster serves no {DRA_GROUP} API (DRA): capturing nodes, pods and workloads only"
        )
        versions = {}
    for kind in CAPTURED_KINDS:
        if kind.group == DRA_GROUP:
            if kind.resource not in versions:
                if versions:
                    result.notes.append(
                        f"the cluster serves no {kind.qualified()} in a version drasnap reads: "
                        "not captured"
                    )
                continue
            version = versions[kind.resource]
        else:
            version = kind.version
        api_version = f"{kind.group}/{version}" if kind.group else version
        listed = KindCapture(kind, api_version)
        scopes: Sequence[str | None] = (
            list(namespaces) if kind.namespaced and namespaces else [None]
        )
        versions_seen: list[str] = []
        for namespace in scopes:
            objects, rv, pages, restarts = list_kind(
                client,
                kind,
                version,
                namespace,
                page_size=page_size,
                progress=progress,
                done=len(listed.objects),
            )
            versions_seen.append(rv)
            listed.pages += pages
            listed.restarts += restarts
            for obj in objects:
                converted = to_v1(obj, kind, api_version, result.notes)
                if converted.get("apiVersion") != obj.get("apiVersion", api_version):
                    listed.converted += 1
                listed.objects.append(converted)
        listed.resource_version = ",".join(versions_seen)
        result.kinds.append(listed)
    if second_pass:
        # One short watch per kind and namespace, all at once (each lasts up to a second).
        from concurrent.futures import ThreadPoolExecutor

        checks = []
        for listed in result.kinds:
            version = listed.api_version.rsplit("/", 1)[-1]
            scopes = list(namespaces) if listed.kind.namespaced and namespaces else [None]
            for namespace, rv in zip(scopes, listed.resource_version.split(","), strict=False):
                checks.append((listed.kind, version, namespace, rv))
        with ThreadPoolExecutor(max_workers=min(16, max(1, len(checks)))) as pool:
            changed = list(pool.map(lambda c: _changed_since(client, *c), checks))
        for (kind, *_), was_changed in zip(checks, changed, strict=True):
            if was_changed and kind.kind not in result.changed:
                result.changed.append(kind.kind)
    return result
