"""A small API server on 127.0.0.1 that answers as kube-apiserver does, for the real kubernetes
client: discovery documents, paged lists (``limit``/``continue``, the list's
``metadata.resourceVersion``, items without ``apiVersion``/``kind`` as in typed lists), watch
streams of ``{"type", "object"}`` lines ending in a BOOKMARK, ``Status`` objects for 403 and
410 (an expired continue token; a watch from a compacted resourceVersion gets an ERROR event
with a 410 ``Status``, as kube-apiserver sends it).

Written for these tests (kmock, the mock kopf's tests use, is an aiohttp server for asyncio
tests; drasnap's client is synchronous and these tests need to script pages, expiries and
events precisely, which a hundred lines of ``http.server`` do).
"""

from __future__ import annotations

import base64
import contextlib
import json
import threading
import time
from collections.abc import Callable, Iterable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import yaml

# (kind) -> (group, resource, namespaced)
RESOURCES: dict[str, tuple[str, str, bool]] = {
    "DeviceClass": ("resource.k8s.io", "deviceclasses", False),
    "ResourceSlice": ("resource.k8s.io", "resourceslices", False),
    "DeviceTaintRule": ("resource.k8s.io", "devicetaintrules", False),
    "Node": ("", "nodes", False),
    "ResourceClaimTemplate": ("resource.k8s.io", "resourceclaimtemplates", True),
    "ResourceClaim": ("resource.k8s.io", "resourceclaims", True),
    "Pod": ("", "pods", True),
    "Deployment": ("apps", "deployments", True),
    "ReplicaSet": ("apps", "replicasets", True),
    "StatefulSet": ("apps", "statefulsets", True),
    "Job": ("batch", "jobs", True),
    "ConfigMap": ("", "configmaps", True),
}
_BY_RESOURCE = {(g, r): k for k, (g, r, _) in RESOURCES.items()}


def status(code: int, reason: str, message: str) -> dict[str, Any]:
    return {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": message,
        "reason": reason,
        "code": code,
    }


class FakeKubeApi:
    """The cluster's objects and the scripted faults; :meth:`start` serves them."""

    def __init__(
        self,
        objects: Iterable[dict[str, Any]] = (),
        *,
        dra_versions: tuple[str, ...] = ("v1",),
        max_limit: int = 1000,
    ) -> None:
        self.lock = threading.Condition()
        self.rv = 100
        self.objects: dict[str, dict[tuple[str, str], dict[str, Any]]] = {k: {} for k in RESOURCES}
        self.events: list[tuple[int, str, str, dict[str, Any]]] = []
        self.dra_versions = dra_versions
        self.max_limit = max_limit
        self.compacted = 0  # watches from a resourceVersion below this get 410
        self.expire_continue: dict[str, int] = {}  # resource -> continue requests to refuse
        self.forbidden: set[tuple[str, str]] = set()  # (verb, resource)
        self.requests: list[tuple[str, str, dict[str, list[str]]]] = []
        self.after_list: Callable[[str], None] | None = None  # called after a list's last page
        self.watch_hold = 0.0  # seconds a watch waits for new events before its bookmark
        for obj in objects:
            self._put(obj)
        self.server: ThreadingHTTPServer | None = None

    # -- the cluster -------------------------------------------------------------------------

    def _put(self, obj: dict[str, Any]) -> dict[str, Any]:
        obj = json.loads(json.dumps(obj))
        self.rv += 1
        meta = obj.setdefault("metadata", {})
        meta["resourceVersion"] = str(self.rv)
        meta.setdefault("uid", f"uid-{meta.get('namespace', '')}-{meta['name']}")
        key = (meta.get("namespace", ""), meta["name"])
        self.objects[obj["kind"]][key] = obj
        return obj

    def apply(self, event_type: str, obj: dict[str, Any]) -> int:
        """ADDED/MODIFIED (``obj`` stored) or DELETED; returns the event's resourceVersion."""
        with self.lock:
            if event_type == "DELETED":
                meta = obj["metadata"]
                key = (meta.get("namespace", ""), meta["name"])
                stored = self.objects[obj["kind"]].pop(key)
                self.rv += 1
                stored = json.loads(json.dumps(stored))
                stored["metadata"]["resourceVersion"] = str(self.rv)
            else:
                stored = self._put(obj)
            self.events.append((self.rv, obj["kind"], event_type, stored))
            self.lock.notify_all()
            return self.rv

    def load(self, *paths: Path) -> list[dict[str, Any]]:
        """The objects of YAML files (kinds this server serves), stored."""
        stored = []
        for path in paths:
            for doc in yaml.safe_load_all(path.read_text()):
                if isinstance(doc, dict) and doc.get("kind") in RESOURCES:
                    stored.append(self._put(doc))
        return stored

    def all_objects(self) -> list[dict[str, Any]]:
        return [obj for kind in RESOURCES for obj in self.objects[kind].values()]

    # -- serving -----------------------------------------------------------------------------

    def start(self) -> str:
        api = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:
                pass

            def handle(self) -> None:
                # A client gone (a recorder killed, a watch given up) is no error here.
                with contextlib.suppress(ConnectionResetError, BrokenPipeError):
                    super().handle()

            def do_GET(self) -> None:
                api._handle(self, "GET")

            def do_POST(self) -> None:
                api._handle(self, "POST")

            do_PUT = do_PATCH = do_DELETE = do_POST

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        return f"http://127.0.0.1:{self.server.server_address[1]}"

    def stop(self) -> None:
        if self.server is not None:
            self.server.shutdown()
            self.server.server_close()

    def kubeconfig(self, path: Path, url: str) -> Path:
        path.write_text(
            yaml.safe_dump(
                {
                    "apiVersion": "v1",
                    "kind": "Config",
                    "clusters": [{"name": "test", "cluster": {"server": url}}],
                    "users": [{"name": "tester", "user": {"token": "test-token"}}],
                    "contexts": [
                        {"name": "test", "context": {"cluster": "test", "user": "tester"}}
                    ],
                    "current-context": "test",
                }
            )
        )
        return path

    def _send(self, handler: BaseHTTPRequestHandler, code: int, body: Any) -> None:
        data = json.dumps(body).encode()
        handler.send_response(code)
        handler.send_header("Content-Type", "application/json")
        handler.send_header("Content-Length", str(len(data)))
        handler.end_headers()
        handler.wfile.write(data)

    def _handle(self, handler: BaseHTTPRequestHandler, method: str) -> None:
        url = urlsplit(handler.path)
        query = parse_qs(url.query)
        self.requests.append((method, url.path, query))
        if method != "GET":
            self._send(handler, 405, status(405, "MethodNotAllowed", "read-only test server"))
            return
        parts = [p for p in url.path.split("/") if p]
        if parts == ["apis", "resource.k8s.io"]:
            if not self.dra_versions:
                self._send(
                    handler,
                    404,
                    status(404, "NotFound", "the server could not find the requested resource"),
                )
                return
            versions = [
                {"groupVersion": f"resource.k8s.io/{v}", "version": v} for v in self.dra_versions
            ]
            self._send(
                handler,
                200,
                {
                    "kind": "APIGroup",
                    "apiVersion": "v1",
                    "name": "resource.k8s.io",
                    "versions": versions,
                    "preferredVersion": versions[0],
                },
            )
            return
        if len(parts) == 3 and parts[:2] == ["apis", "resource.k8s.io"]:
            if parts[2] not in self.dra_versions:
                self._send(handler, 404, status(404, "NotFound", "not found"))
                return
            resources = [
                {
                    "name": r,
                    "singularName": "",
                    "namespaced": ns,
                    "kind": k,
                    "verbs": ["create", "delete", "get", "list", "patch", "update", "watch"],
                }
                for k, (g, r, ns) in RESOURCES.items()
                if g == "resource.k8s.io"
            ]
            self._send(
                handler,
                200,
                {
                    "kind": "APIResourceList",
                    "apiVersion": "v1",
                    "groupVersion": f"resource.k8s.io/{parts[2]}",
                    "resources": resources,
                },
            )
            return
        # /api/v1[/namespaces/NS]/R or /apis/G/V[/namespaces/NS]/R
        if parts[:1] == ["api"]:
            group, version, rest = "", parts[1], parts[2:]
        elif parts[:1] == ["apis"] and len(parts) >= 4:
            group, version, rest = parts[1], parts[2], parts[3:]
        else:
            self._send(handler, 404, status(404, "NotFound", "not found"))
            return
        namespace = None
        if len(rest) == 3 and rest[0] == "namespaces":
            namespace, rest = rest[1], rest[2:]
        kind = _BY_RESOURCE.get((group, rest[0])) if len(rest) == 1 else None
        if kind is None or (group == "resource.k8s.io" and version not in self.dra_versions):
            self._send(
                handler,
                404,
                status(404, "NotFound", "the server could not find the requested resource"),
            )
            return
        resource = rest[0]
        watching = query.get("watch", ["false"])[0] in ("true", "1")
        verb = "watch" if watching else "list"
        qualified = f"{resource}.{group}" if group else resource
        if (verb, resource) in self.forbidden:
            scope = f' in the namespace "{namespace}"' if namespace else " at the cluster scope"
            self._send(
                handler,
                403,
                status(
                    403,
                    "Forbidden",
                    f'{qualified} is forbidden: User "system:serviceaccount:default:drasnap" '
                    f'cannot {verb} resource "{resource}" in API group "{group}"{scope}',
                ),
            )
            return
        if watching:
            self._watch(handler, kind, namespace, query)
        else:
            self._list(handler, kind, resource, namespace, query)

    def _selected(
        self, kind: str, namespace: str | None, query: dict[str, list[str]]
    ) -> list[dict[str, Any]]:
        items = [
            o
            for (ns, _), o in sorted(self.objects[kind].items())
            if namespace is None or ns == namespace
        ]
        selector = query.get("fieldSelector", [""])[0]
        if selector.startswith("metadata.name="):
            items = [o for o in items if o["metadata"]["name"] == selector.split("=", 1)[1]]
        return items

    def _list(
        self,
        handler: BaseHTTPRequestHandler,
        kind: str,
        resource: str,
        namespace: str | None,
        query: dict[str, list[str]],
    ) -> None:
        limit = min(int(query.get("limit", ["0"])[0]) or self.max_limit, self.max_limit)
        token = query.get("continue", [""])[0]
        with self.lock:
            if token:
                if self.expire_continue.get(resource, 0) > 0:
                    self.expire_continue[resource] -= 1
                    self._send(
                        handler,
                        410,
                        status(
                            410,
                            "Expired",
                            "The provided continue parameter is too old to display a consistent "
                            "list result. You can start a new list without the continue parameter.",
                        ),
                    )
                    return
                state = json.loads(base64.b64decode(token))
                list_rv, offset = state["rv"], state["start"]
            else:
                list_rv, offset = self.rv, 0
            items = self._selected(kind, namespace, query)
            page = items[offset : offset + limit]
            metadata: dict[str, Any] = {"resourceVersion": str(list_rv)}
            if offset + limit < len(items):
                metadata["continue"] = base64.b64encode(
                    json.dumps({"rv": list_rv, "start": offset + limit}).encode()
                ).decode()
                metadata["remainingItemCount"] = len(items) - offset - limit
            out = []
            for obj in page:
                item = dict(obj)
                item.pop("apiVersion", None)
                item.pop("kind", None)
                out.append(item)
            group = RESOURCES[kind][0]
            api_version = self._api_version(kind, group, handler.path)
        self._send(
            handler,
            200,
            {"kind": f"{kind}List", "apiVersion": api_version, "metadata": metadata, "items": out},
        )
        if "continue" not in metadata and self.after_list is not None:
            self.after_list(kind)

    @staticmethod
    def _api_version(kind: str, group: str, path: str) -> str:
        parts = [p for p in urlsplit(path).path.split("/") if p]
        return f"{group}/{parts[2]}" if group else parts[1]

    def _watch(
        self,
        handler: BaseHTTPRequestHandler,
        kind: str,
        namespace: str | None,
        query: dict[str, list[str]],
    ) -> None:
        since = int(query.get("resourceVersion", ["0"])[0] or 0)
        timeout = float(query.get("timeoutSeconds", ["1"])[0])
        handler.send_response(200)
        handler.send_header("Content-Type", "application/json")
        handler.send_header("Transfer-Encoding", "chunked")
        handler.end_headers()

        def line(event: dict[str, Any]) -> None:
            data = json.dumps(event).encode() + b"\n"
            handler.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
            handler.wfile.flush()

        try:
            if since < self.compacted:
                line(
                    {
                        "type": "ERROR",
                        "object": status(
                            410, "Expired", f"too old resource version: {since} ({self.compacted})"
                        ),
                    }
                )
            else:
                deadline = time.monotonic() + min(timeout, self.watch_hold)
                sent = since
                while True:
                    with self.lock:
                        pending = [
                            e
                            for e in self.events
                            if e[0] > sent
                            and e[1] == kind
                            and (
                                namespace is None or e[3]["metadata"].get("namespace") == namespace
                            )
                        ]
                        if not pending:
                            left = deadline - time.monotonic()
                            if left <= 0:
                                break
                            self.lock.wait(left)
                            continue
                    for rv, _, event_type, obj in pending:
                        item = dict(obj)
                        item.setdefault("kind", kind)
                        line({"type": event_type, "object": item})
                        sent = rv
                with self.lock:
                    current = self.rv
                line(
                    {
                        "type": "BOOKMARK",
                        "object": {
                            "kind": kind,
                            "apiVersion": "v1",
                            "metadata": {"resourceVersion": str(current)},
                        },
                    }
                )
            handler.wfile.write(b"0\r\n\r\n")
            handler.wfile.flush()
        except (BrokenPipeError, ConnectionResetError):
            pass
