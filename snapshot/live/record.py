"""A live cluster's history in a named store: a capture, then every watch event, one commit each.

:class:`Recorder` writes into a store (``store.VersionedStore``), each object under its kind and
key (:func:`snapshot.k8s.kinds.object_key`; slices one by one, by name):

- the capture (:func:`snapshot.live.capture.capture`) as one layer, ``capture: N objects``;
- then every ``ADDED``/``MODIFIED``/``DELETED`` event of a watch of each kind from the
  resourceVersion it was listed at, as one layer committed at depth 0, labelled
  ``<TYPE> <Kind> <key> rv=<resourceVersion>``; so ``history``, ``explain``, ``query`` and the
  ``allocation_events`` view read a real cluster's past as they read a run's;
- a watch that expires (410 Gone, or an ERROR event with a 410 Status) re-lists its kind and
  records the difference as one layer, ``re-list <Kind> after 410 Gone rv=<rv>: +A ~M -D``.

Each layer also puts the record's state (:data:`RECORD_KIND`): every kind's last recorded
resourceVersion, so a checkpoint holds the events and the versions they reached together. The
store is checkpointed every ``checkpoint_every`` seconds and at the end; a process killed between
checkpoints loses only what came after the last one, and :meth:`Recorder.resume` watches again
from the versions it holds: no event lost, none recorded twice (an event at or below a kind's
recorded version is skipped). BOOKMARK events move a watch on without a layer.

Each kind is watched on its own connection, so events of different kinds are ordered as they
arrive (those arriving within 50 ms of each other by resourceVersion); a kind's own events are
always in its order.
"""

from __future__ import annotations

import queue
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final

from drasnap.snapshot.errors import ApiError, CaptureError, SnapshotError
from drasnap.snapshot.k8s.kinds import DRA_GROUP, object_key
from drasnap.snapshot.live.capture import (
    CAPTURED_KINDS,
    Capture,
    LiveKind,
    RawClient,
    capture,
    dra_versions,
    forbidden,
    list_kind,
    resource_path,
    to_v1,
)

__all__ = ["RECORD_KIND", "RecordSummary", "Recorder", "newer"]

RECORD_KIND: Final = "LiveRecording"
_STATE_KEY: Final = "state"
_GATHER: Final = 0.05  # seconds events of other kinds may take to arrive, to be put in order
_WATCH_TIMEOUT: Final = 30  # seconds a watch request asks for before it is made again
_RETRIES: Final = 5  # connection failures in a row a watch survives (backing off 2, 4, ... s)


def newer(rv: str, than: str) -> bool:
    """Whether resourceVersion ``rv`` is after ``than`` (etcd's are integers; others are
    compared as text, never skipped)."""
    if not than:
        return True
    if rv.isdigit() and than.isdigit():
        return int(rv) > int(than)
    return rv != than


def _scope_key(kind: str, namespace: str | None) -> str:
    return f"{kind}@{namespace}" if namespace else kind


def _order(entry: tuple[str, str | None, Any]) -> tuple[int, int]:
    item = entry[2]
    if not isinstance(item, Mapping):
        return (1, 0)  # re-lists and errors after the events that came with them
    rv = str((item.get("object", {}).get("metadata") or {}).get("resourceVersion") or "")
    return (0, int(rv) if rv.isdigit() else 0)


@dataclass
class RecordSummary:
    """What a :meth:`Recorder.run` recorded."""

    events: int = 0
    skipped: int = 0  # events at or below the recorded version (seen before a crash)
    relists: int = 0
    checkpoints: int = 0
    resource_versions: dict[str, str] = field(default_factory=dict)


class Recorder:
    """Records one cluster into one store (module docstring)."""

    def __init__(
        self,
        client: RawClient,
        store: Any,
        *,
        namespaces: Sequence[str] = (),
        page_size: int = 500,
        checkpoint_every: float = 2.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.client = client
        self.store = store
        self.namespaces = list(namespaces)
        self.page_size = page_size
        self.checkpoint_every = checkpoint_every
        self.clock = clock
        self.state: dict[str, Any] = {}
        self.kinds: dict[str, tuple[LiveKind, str]] = {}  # kind -> (LiveKind, api version)

    # -- starting ----------------------------------------------------------------------------

    def has_recording(self) -> bool:
        return isinstance(self.store.get(RECORD_KIND, _STATE_KEY), Mapping)

    def capture(self, progress: Callable[[str, int], None] | None = None) -> Capture:
        """The capture :meth:`start` records (taken before a store is opened, so a cluster
        that refuses it leaves nothing behind)."""
        return capture(
            self.client,
            namespaces=self.namespaces,
            page_size=self.page_size,
            progress=progress,
            second_pass=False,
        )

    def start(self, result: Capture | None = None) -> int:
        """Record ``result`` (else a new :meth:`capture`) as one committed layer; the number
        of objects."""
        if result is None:
            result = self.capture()
        versions: dict[str, str] = {}
        api_versions: dict[str, str] = {}
        count = 0
        self.store.fork(f"capture: {sum(len(k.objects) for k in result.kinds)} objects")
        for listed in result.kinds:
            api_versions[listed.kind.kind] = listed.api_version
            scopes = self._scopes(listed.kind)
            for scope, rv in zip(scopes, listed.resource_version.split(","), strict=True):
                versions[_scope_key(listed.kind.kind, scope)] = rv
            for obj in listed.objects:
                self.store.put(listed.kind.kind, object_key(obj), obj)
                count += 1
        self.state = {
            "resourceVersions": versions,
            "apiVersions": api_versions,
            "namespaces": self.namespaces,
            "notes": result.notes,
        }
        self.store.put(RECORD_KIND, _STATE_KEY, self.state)
        self.store.commit()
        self.store.checkpoint()
        self._kinds()
        return count

    def resume(self) -> None:
        """Continue the recording the store holds (refused when it holds none, or when the
        namespaces differ)."""
        state = self.store.get(RECORD_KIND, _STATE_KEY)
        if not isinstance(state, Mapping):
            raise SnapshotError("the store holds no recording to resume")
        recorded = list(state.get("namespaces") or [])
        if recorded != self.namespaces:
            raise SnapshotError(
                f"the recording was made with --namespace {recorded or 'all'}, not "
                f"{self.namespaces or 'all'}: give the same namespaces to resume it"
            )
        self.state = {**state, "resourceVersions": dict(state["resourceVersions"])}
        self._kinds()

    def _kinds(self) -> None:
        by_name = {k.kind: k for k in CAPTURED_KINDS}
        self.kinds = {
            kind: (by_name[kind], api_version)
            for kind, api_version in self.state["apiVersions"].items()
        }

    def _scopes(self, kind: LiveKind) -> list[str | None]:
        return list(self.namespaces) if kind.namespaced and self.namespaces else [None]

    # -- watching ----------------------------------------------------------------------------

    def run(
        self, *, duration: float | None = None, stop: threading.Event | None = None
    ) -> RecordSummary:
        """Watch every kind until ``duration`` seconds have passed or ``stop`` is set; record
        each event (module docstring); checkpoint at the end."""
        stop = stop or threading.Event()
        events: queue.Queue[tuple[str, str | None, Any]] = queue.Queue()
        summary = RecordSummary()
        ended = threading.Event()
        threads: dict[str, threading.Thread] = {}

        def watch(kind: str, namespace: str | None, since: str) -> None:
            live, api_version = self.kinds[kind]
            version = api_version.rsplit("/", 1)[-1]
            path = resource_path(live, version, namespace)
            rv = since
            failures = 0
            while not ended.is_set():
                query: list[tuple[str, Any]] = [
                    ("resourceVersion", rv),
                    ("allowWatchBookmarks", "true"),
                    ("timeoutSeconds", _WATCH_TIMEOUT),
                ]
                if live.field_selector:
                    query.append(("fieldSelector", live.field_selector))
                try:
                    for event in self.client.watch(path, query, _WATCH_TIMEOUT):
                        if ended.is_set():
                            return
                        kind_of_event = event.get("type")
                        obj = event.get("object") or {}
                        if kind_of_event == "ERROR":
                            if obj.get("code") == 410:
                                events.put((kind, namespace, "EXPIRED"))
                                return
                            events.put((kind, namespace, CaptureError(str(obj.get("message")))))
                            return
                        meta = obj.get("metadata") or {}
                        if meta.get("resourceVersion"):
                            rv = str(meta["resourceVersion"])
                        if kind_of_event != "BOOKMARK":
                            events.put((kind, namespace, event))
                except ApiError as exc:
                    if exc.status == 410:
                        events.put((kind, namespace, "EXPIRED"))
                        return
                    if exc.status == 403:
                        events.put((kind, namespace, forbidden(exc, "watch", live, namespace)))
                        return
                    events.put((kind, namespace, exc))
                    return
                except CaptureError as exc:  # the connection: tried again, then given up
                    failures += 1
                    if failures > _RETRIES:
                        events.put((kind, namespace, exc))
                        return
                    ended.wait(min(2.0**failures, 30.0))
                else:
                    failures = 0

        def launch(kind: str, namespace: str | None) -> None:
            since = self.state["resourceVersions"].get(_scope_key(kind, namespace), "")
            thread = threading.Thread(target=watch, args=(kind, namespace, since), daemon=True)
            threads[_scope_key(kind, namespace)] = thread
            thread.start()

        for kind, (live, _) in self.kinds.items():
            for namespace in self._scopes(live):
                launch(kind, namespace)
        start = self.clock()
        last_checkpoint = start
        try:
            while not stop.is_set():
                now = self.clock()
                if duration is not None and now - start >= duration:
                    break
                if now - last_checkpoint >= self.checkpoint_every:
                    self.store.checkpoint()
                    summary.checkpoints += 1
                    last_checkpoint = now
                wait = 0.2 if duration is None else max(0.0, min(0.2, duration - (now - start)))
                try:
                    batch = [events.get(timeout=wait)]
                except queue.Empty:
                    continue
                time.sleep(_GATHER)
                while True:  # what has arrived, applied in resourceVersion order across kinds
                    try:
                        batch.append(events.get_nowait())
                    except queue.Empty:
                        break
                batch.sort(key=_order)
                for kind, namespace, item in batch:
                    if isinstance(item, Exception):
                        raise item
                    if item == "EXPIRED":
                        self._relist(kind, namespace)
                        summary.relists += 1
                        launch(kind, namespace)
                    elif self._record(kind, namespace, item):
                        summary.events += 1
                    else:
                        summary.skipped += 1
        finally:
            ended.set()
            self.store.checkpoint()
            summary.checkpoints += 1
        summary.resource_versions = dict(self.state["resourceVersions"])
        return summary

    def _save(self, scope: str, rv: str) -> None:
        # A new value each time: what the store holds is shared with its cache, never mutated.
        versions = {**self.state["resourceVersions"], scope: rv}
        self.state = {**self.state, "resourceVersions": versions}
        self.store.put(RECORD_KIND, _STATE_KEY, self.state)

    def _record(self, kind: str, namespace: str | None, event: Mapping[str, Any]) -> bool:
        live, api_version = self.kinds[kind]
        obj = dict(event["object"])
        rv = str((obj.get("metadata") or {}).get("resourceVersion") or "")
        scope = _scope_key(kind, namespace)
        if not newer(rv, self.state["resourceVersions"].get(scope, "")):
            return False
        event_type = str(event.get("type"))
        obj = to_v1(obj, live, api_version, [])
        key = object_key(obj)
        self.store.fork(f"{event_type} {kind} {key} rv={rv}")
        if event_type == "DELETED":
            if self.store.get(kind, key) is not None:
                self.store.delete(kind, key)
        else:
            self.store.put(kind, key, obj)
        self._save(scope, rv)
        self.store.commit()
        return True

    def _relist(self, kind: str, namespace: str | None) -> None:
        live, api_version = self.kinds[kind]
        version = api_version.rsplit("/", 1)[-1]
        if live.group == DRA_GROUP:  # the server may serve another version by now
            served = dra_versions(self.client) or {}
            version = served.get(live.resource, version)
            api_version = f"{DRA_GROUP}/{version}"
            self.kinds[kind] = (live, api_version)
            self.state = {
                **self.state,
                "apiVersions": {**self.state["apiVersions"], kind: api_version},
            }
        objects, rv, _, _ = list_kind(
            self.client, live, version, namespace, page_size=self.page_size
        )
        listed = {}
        for obj in objects:
            converted = to_v1(obj, live, api_version, [])
            listed[object_key(converted)] = converted
        prefix = f"{namespace}/" if namespace else ""
        held = {k: v for k, v in self.store.items(kind).items() if k.startswith(prefix)}
        added = [k for k in listed if k not in held]
        changed = [k for k in listed if k in held and held[k] != listed[k]]
        deleted = [k for k in held if k not in listed]
        self.store.fork(
            f"re-list {kind} after 410 Gone rv={rv}: +{len(added)} ~{len(changed)} -{len(deleted)}"
        )
        for key in (*added, *changed):
            self.store.put(kind, key, listed[key])
        for key in deleted:
            self.store.delete(kind, key)
        self._save(_scope_key(kind, namespace), rv)
        self.store.commit()
