"""A recorded cluster's workload as a trace (``--trace-from-db REC``; ``docs/traces.md``).

A recording (``drasnap record``, :mod:`snapshot.live.record`) is a store holding a capture
layer, then one committed layer per watch event. Its first state is the capture's commit: a
run starts there (as ``--from-db REC --from-at SEQ`` would), and what came after becomes the
trace:

- a Pod first put after it (a pod created) is a ``create`` at its put's time less the first
  state's, in whole milliseconds; its ``spec.nodeName`` and ``status`` are dropped, so the
  simulated scheduler places it (a pod bound when created, a DaemonSet's say, is still created
  pending: a note says how many);
- a Pod deleted is a ``delete`` (one the run's start does not hold, a completed pod the
  manifests' reader skipped, is left out, counted in a note);
- a ResourceClaim or ResourceClaimTemplate created is a ``create`` (a claim's ``status``
  dropped), moved to just before the first pod naming it if it was recorded after that pod;
  claims a Pod owns are left out (the simulation makes them from the pod's template);
- anything else, an object modified (a pod bound, a claim allocated) or a claim or template
  deleted, is ignored and counted in a note: the simulation decides those itself.

The objects get the checks a JSON Lines trace's get (:class:`.jsonl.TraceChecker`), each
message naming the recording and the seq of the write.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from typing import Any, Final
from urllib.parse import quote as url_quote
from urllib.parse import unquote

import orjson
from drasnap.snapshot.errors import ScenarioError, one_line
from drasnap.snapshot.k8s.kinds import (
    CLAIM_KIND,
    CLAIM_TEMPLATE_KIND,
    DEFAULT_NAMESPACE,
    POD_KIND,
)
from drasnap.snapshot.simulation.settings import RECORDED
from drasnap.snapshot.simulation.traces.events import (
    CREATE,
    DELETE,
    TRACE_KINDS,
    Trace,
    TraceEvent,
)
from drasnap.snapshot.simulation.traces.jsonl import TraceChecker
from drasnap.store import (
    Fate,
    Journal,
    JournalRecord,
    LayerHistory,
    NotADatabaseError,
    StoreNotFoundError,
)

__all__ = ["RECORDED", "read_recorded", "recorded_source", "split_source"]

_CAPTURE: Final = "capture:"  # the capture layer's label (snapshot.live.record.Recorder.start)
_CLASS_KIND: Final = "DeviceClass"

_Ident = tuple[str, str]  # (kind, "namespace/name")
_Entry = tuple[int, int, str, str, dict[str, Any]]  # (seq, t_ms, op, kind, object)


def recorded_source(db: str, name: str) -> str:
    """The ``--trace`` value naming recording ``name`` in ``db``, as a run's settings keep it
    (:data:`RECORDED` ``NAME@DB``, the name URL-quoted so that the first ``@`` ends it);
    ``--trace-from-db DB --trace-from-name NAME`` give it."""
    return f"{RECORDED}{url_quote(name, safe='')}@{db}"


def split_source(text: str) -> tuple[str, str]:
    """``(db, name)`` of a :func:`recorded_source` value."""
    quoted, _, db = text[len(RECORDED) :].partition("@")
    return db, unquote(quoted)


def read_recorded(
    db: str,
    name: str,
    *,
    classes: set[str] | None = None,
    existing: set[_Ident] | None = None,
    features: Mapping[str, bool] | None = None,
) -> tuple[int, Trace]:
    """The seq of recording ``name``'s first state (its capture's commit) and the trace of what
    came after (module docstring). Nothing is written.

    ``classes`` and ``existing``: the DeviceClass names and the ``(kind, key)`` of the pods,
    claims and templates of the run's starting cluster (default: the first state's, as
    recorded); ``features``: the run's feature gates.

    Raises:
        ScenarioError: one line: no such database or recording, a store holding no capture,
            or an object the checks of a trace refuse (naming its seq).
    """
    try:
        journal = Journal.open(db, name=name)
    except StoreNotFoundError as exc:
        raise ScenarioError(one_line(f"--trace-from-db: {exc.args[0]}")) from None
    except NotADatabaseError as exc:
        raise ScenarioError(one_line(f"--trace-from-db: {exc}")) from None
    with journal:
        layers = journal.layers()
        capture = _capture(layers, db, name)
        writes = [
            record
            for kind in (*TRACE_KINDS, _CLASS_KIND)
            for record in journal.kind_writes(kind)
            if _kept(record, layers)
        ]
    writes.sort(key=lambda r: r.seq)
    assert capture.closed_seq is not None and capture.closed_at is not None  # committed
    first, t0 = capture.closed_seq, capture.closed_at
    live: dict[_Ident, Any] = {}
    for record in (r for r in writes if r.seq <= first):
        _apply(live, record)
    if classes is None:
        classes = {key for kind, key in live if kind == _CLASS_KIND}
    if existing is None:
        existing = {ident for ident in live if ident[0] != _CLASS_KIND}
    builder = _Builder(f"recording {name!r} in {db}", classes, existing, features)
    t_ms = 0
    for record in (r for r in writes if r.seq > first and r.kind != _CLASS_KIND):
        # (never back in time, should the recorder's wall clock have stepped back)
        t_ms = max(t_ms, round((record.ts - t0) * 1000))
        builder.add(record, t_ms, live)
    events = builder.finish()
    body = [first, [[e.t_ms, e.op, e.kind, e.key, e.object] for e in events]]
    digest = hashlib.sha256(orjson.dumps(body, option=orjson.OPT_SORT_KEYS)).hexdigest()
    return first, Trace(tuple(events), digest, recorded_source(db, name), builder.notes())


def _capture(layers: Mapping[int, LayerHistory], db: str, name: str) -> LayerHistory:
    """The recording's capture layer (its first, should a store hold several)."""
    captures = [
        layer
        for layer in layers.values()
        if (layer.label or "").startswith(_CAPTURE)
        and layer.fate is Fate.COMMITTED
        and layer.closed_seq is not None
    ]
    if not captures:
        raise ScenarioError(
            f"--trace-from-db: store {name!r} in {db} holds no capture (no committed layer "
            f"labelled {_CAPTURE!r}): it is not a recording of `drasnap record`"
        )
    return min(captures, key=lambda layer: layer.opened_seq)


def _kept(record: JournalRecord, layers: Mapping[int, LayerHistory]) -> bool:
    """Whether a write reached the recording: written in the base or a committed layer."""
    layer = layers.get(record.layer)
    return record.layer == 0 or (layer is not None and layer.fate is Fate.COMMITTED)


def _ident(record: JournalRecord) -> _Ident:
    assert record.kind is not None and record.key is not None  # a put or delete
    return record.kind, record.key


def _apply(live: dict[_Ident, Any], record: JournalRecord) -> None:
    if record.op == "put":
        live[_ident(record)] = record.value
    else:
        live.pop(_ident(record), None)


def _owned_by_pod(obj: Mapping[str, Any]) -> bool:
    """A claim the resource-claim controller made from a pod's template (the pod owns it)."""
    owners = (obj.get("metadata") or {}).get("ownerReferences") or ()
    return any(o.get("kind") == POD_KIND and o.get("controller") for o in owners)


class _Builder:
    """The trace's events as the writes after the first state are read, checked as they go."""

    def __init__(
        self,
        where: str,
        classes: set[str],
        existing: set[_Ident],
        features: Mapping[str, bool] | None,
    ) -> None:
        self.where = where
        self.checker = TraceChecker(where, classes, existing, features)
        # (seq, t_ms, op, kind, object) in the recording's order, claims not yet moved
        self.ordered: list[_Entry] = []
        self.ignored: dict[str, int] = {}
        self.bound: list[str] = []
        self.generated = 0
        self.unknown_deletes: list[str] = []

    def add(self, record: JournalRecord, t_ms: int, live: dict[_Ident, Any]) -> None:
        ident = _ident(record)
        kind, key = ident
        was_live = ident in live
        _apply(live, record)
        if record.op == "put" and was_live:
            self._ignore(f"{kind} modified")
        elif record.op != "put":
            if was_live and kind == POD_KIND:
                self.ordered.append((record.seq, t_ms, DELETE, kind, _named(key)))
            elif was_live:
                self._ignore(f"{kind} deleted")
        elif kind == POD_KIND:
            pod = _unbound(record.value, key, self.bound)
            self.ordered.append((record.seq, t_ms, CREATE, kind, pod))
        elif _owned_by_pod(record.value):
            self.generated += 1
        else:
            obj = dict(record.value)
            obj.pop("status", None)
            self.ordered.append((record.seq, t_ms, CREATE, kind, obj))

    def _ignore(self, what: str) -> None:
        self.ignored[what] = self.ignored.get(what, 0) + 1

    def finish(self) -> list[TraceEvent]:
        """The checked events: each claim and template created before the first pod naming it."""
        events: list[TraceEvent] = []
        done: set[int] = set()  # seqs of claim creates moved ahead of their pod
        for i, (seq, t_ms, op, kind, obj) in enumerate(self.ordered):
            if seq in done:
                continue
            if op == CREATE and kind == POD_KIND:
                for later in self._needed(obj, self.ordered[i + 1 :]):
                    done.add(later[0])
                    events.append(self._create(later[0], t_ms, later[3], later[4]))
            if op == CREATE:
                events.append(self._create(seq, t_ms, kind, obj))
                continue
            ident = (kind, _key(obj))
            if ident not in self.checker.live:
                self.unknown_deletes.append(ident[1])
                continue
            where = f"{self.where} seq {seq}"
            events.append(self.checker.delete(where, seq, t_ms, kind, obj))
        return events

    def _create(self, seq: int, t_ms: int, kind: str, obj: dict[str, Any]) -> TraceEvent:
        return self.checker.create(f"{self.where} seq {seq}", seq, t_ms, kind, obj, None)

    def _needed(self, pod: dict[str, Any], rest: list[_Entry]) -> list[_Entry]:
        """The creates after ``pod`` of the claims and templates it names that do not exist
        yet (their first create each)."""
        namespace = _key(pod).partition("/")[0]
        wanted: set[_Ident] = set()
        for ref in (pod.get("spec") or {}).get("resourceClaims") or ():
            if ref.get("resourceClaimName"):
                wanted.add((CLAIM_KIND, f"{namespace}/{ref['resourceClaimName']}"))
            if ref.get("resourceClaimTemplateName"):
                wanted.add((CLAIM_TEMPLATE_KIND, f"{namespace}/{ref['resourceClaimTemplateName']}"))
        wanted -= set(self.checker.live)
        found = []
        for entry in rest:
            ident = (entry[3], _key(entry[4]))
            if entry[2] == CREATE and ident in wanted:
                found.append(entry)
                wanted.discard(ident)
        return found

    def notes(self) -> tuple[str, ...]:
        notes = list(self.checker.notes)
        if self.bound:
            shown = ", ".join(self.bound[:3]) + (", ..." if len(self.bound) > 3 else "")
            notes.append(
                f"{len(self.bound)} pod(s) of the {self.where} were bound when created ({shown}):"
                " created pending, the simulated scheduler places them"
            )
        if self.generated:
            notes.append(
                f"{self.generated} ResourceClaim(s) of the {self.where} were made for a pod from"
                " its template: left out, the simulation makes them"
            )
        if self.unknown_deletes:
            notes.append(
                f"{len(self.unknown_deletes)} pod delete(s) of the {self.where} name a pod the "
                f"run does not hold ({', '.join(self.unknown_deletes[:3])}): left out"
            )
        if self.ignored:
            counts = ", ".join(f"{n} {what}" for what, n in sorted(self.ignored.items()))
            notes.append(
                f"the {self.where} also holds {counts}: ignored, the simulation decides those"
            )
        return tuple(notes)


def _unbound(recorded: Any, key: str, bound: list[str]) -> dict[str, Any]:
    """The pod as recorded, with no node and no status."""
    pod = dict(recorded)
    pod.pop("status", None)
    spec = dict(pod.get("spec") or {})
    if spec.pop("nodeName", None):
        bound.append(key)
    pod["spec"] = spec
    return pod


def _named(key: str) -> dict[str, Any]:
    """A delete's object: the pod named by its key."""
    namespace, _, name = key.partition("/")
    return {"kind": POD_KIND, "metadata": {"namespace": namespace, "name": name}}


def _key(obj: Mapping[str, Any]) -> str:
    metadata = obj.get("metadata") or {}
    return f"{metadata.get('namespace') or DEFAULT_NAMESPACE}/{metadata.get('name')}"
