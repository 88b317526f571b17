"""drasnap's own trace format, JSON Lines (``--trace FILE``; ``docs/timelines.md`` 2.10).

One event a line, blank lines skipped::

    {"t": 0, "op": "create", "object": {"apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaimTemplate", "metadata": {"name": "gpu"}, "spec": {...}}}
    {"t": 1.5, "op": "create", "runs": 600, "object": {"apiVersion": "v1", "kind": "Pod", ...}}
    {"t": 3600, "op": "delete", "object": {"kind": "Pod", "metadata": {"name": "p"}}}

(each on one line). ``t`` is seconds from the start (an integer or a decimal, whole
milliseconds, never decreasing from one line to the next); ``op`` is ``create`` or ``delete``;
``object`` is a Pod, ResourceClaim or ResourceClaimTemplate written as for ``kubectl apply``
(a delete needs only ``kind`` and ``metadata``'s ``name`` and ``namespace``); ``runs``
(seconds, pods only) makes the pod complete that long after it is bound, else it runs until
its delete. A missing namespace is ``default``, as the API server places it.

The whole file is checked before the trace is returned, so that a mistake refuses the run
before its store is opened: each problem is one line naming the file and line
(``trace.jsonl line 7: ...``). A created object is validated as ``--from`` validates a
manifest (:func:`snapshot.ingest.conversion.convert_to_v1`, then
:func:`snapshot.ingest.references.check_dra_objects` for a claim or template: classes exist,
fields are ones the allocator implements, selectors compile), and references are followed
through the trace: a pod's claims and claim templates exist when it is created, a delete
names a live object, a create does not repeat one.

Times are read exactly: ``0.001`` is 1 ms, and ``1.0005`` (half a millisecond) is refused
rather than rounded. A float is read back from its shortest decimal form (Python's ``repr``,
which round-trips), so ``0.1`` is the 100 ms its writer meant.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from decimal import Decimal
from pathlib import Path
from typing import Any, Final

import orjson
from drasnap.snapshot.errors import ManifestError, ObjectValidationError, ScenarioError, one_line
from drasnap.snapshot.ingest.limits import read_input
from drasnap.snapshot.ingest.references import check_dra_objects
from drasnap.snapshot.k8s.kinds import (
    CLAIM_KIND,
    CLAIM_TEMPLATE_KIND,
    DEFAULT_NAMESPACE,
    POD_KIND,
    object_key,
)
from drasnap.snapshot.k8s.objects import describe_value, quote
from drasnap.snapshot.simulation.durations import MAX_MS, format_duration
from drasnap.snapshot.simulation.traces.events import (
    CREATE,
    DELETE,
    OPS,
    TRACE_KINDS,
    Trace,
    TraceEvent,
)

__all__ = ["TraceChecker", "read_jsonl"]

_FIELDS: Final = ("t", "op", "object", "runs")
_BOM: Final = b"\xef\xbb\xbf"
_SHAPE: Final = '{"t": seconds, "op": "create" or "delete", "object": {...}}'
_KINDS_TEXT: Final = ", ".join(TRACE_KINDS)
# A pod's reference to a claim, by field: the kind it names.
_POD_CLAIM_FIELDS: Final = (
    ("resourceClaimName", CLAIM_KIND),
    ("resourceClaimTemplateName", CLAIM_TEMPLATE_KIND),
)

_Ident = tuple[str, str]  # (kind, "namespace/name")


def read_jsonl(
    path: Path,
    *,
    classes: set[str],
    existing: set[tuple[str, str]],
    features: Mapping[str, bool] | None = None,
) -> Trace:
    """The checked trace in ``path`` (module docstring). Nothing is written.

    ``classes``: the DeviceClass names of the starting cluster. ``existing``: the
    ``(kind, "namespace/name")`` of the pods, claims and claim templates it holds, which the
    trace may delete or refer to. ``features``: the feature gates the run simulates
    (Kubernetes 1.36's by default), for which claim fields the allocator takes.

    Raises:
        ScenarioError: one line naming the file and line: a line that is not a JSON object,
            an unknown field, op or kind, a ``t`` missing, not a number, negative, not whole
            milliseconds or before the previous line's, a ``runs`` on anything but a pod's
            create or negative, an invalid object, a device request naming a DeviceClass the
            cluster lacks, a pod naming a claim or template that does not exist then, a
            delete of an object that does not exist then, a create of one that does; or the
            file cannot be read.
    """
    try:
        data = read_input(path)
    except ManifestError as exc:
        raise ScenarioError(one_line(exc)) from exc
    reader = TraceChecker(str(path), classes, existing, features)
    for number, raw in enumerate(data.removeprefix(_BOM).split(b"\n"), start=1):
        if raw.strip():
            reader.read_line(number, raw)
    return Trace(
        events=tuple(reader.events),
        digest=hashlib.sha256(data).hexdigest(),
        path=str(path),
        notes=tuple(reader.notes),
    )


class TraceChecker:
    """The state of a trace read so far: what exists at the current line, and since when."""

    def __init__(
        self,
        path: str,
        classes: set[str],
        existing: set[_Ident],
        features: Mapping[str, bool] | None,
    ) -> None:
        self.path = path
        self.classes = frozenset(classes)
        self.features = features
        # What exists now, with the line that created it (0: the starting cluster), and what
        # the trace deleted, with the line (for the message when it is named again).
        self.live: dict[_Ident, int] = dict.fromkeys(existing, 0)
        self.deleted: dict[_Ident, int] = {}
        self.events: list[TraceEvent] = []
        self.notes: list[str] = []
        self.last: tuple[int, Any, int] | None = None  # (t_ms, t as written, line)

    def read_line(self, number: int, raw: bytes) -> None:
        where = f"{self.path} line {number}"
        try:
            doc = orjson.loads(raw)
        except orjson.JSONDecodeError as exc:
            raise _refuse(where, f"not JSON: {exc.msg} (column {exc.colno})") from None
        if not isinstance(doc, dict):
            raise _refuse(where, f"{describe_value(doc)} where an event {_SHAPE} was expected")
        unknown = [name for name in doc if name not in _FIELDS]
        if unknown:
            raise _refuse(
                where, f"unknown field {quote(unknown[0])}: an event has t, op, object and runs"
            )
        if "t" not in doc:
            raise _refuse(where, '"t" is missing: the event\'s time in seconds from the start')
        t_ms = _milliseconds(doc["t"], "t", where)
        if self.last is not None and t_ms < self.last[0]:
            _, shown, line = self.last
            raise _refuse(
                where,
                f"\"t\" {doc['t']!r} is before line {line}'s {shown!r}: a trace's times never "
                "decrease (sort the lines by t)",
            )
        op = doc.get("op")
        if op not in OPS:
            shown_op = "missing" if "op" not in doc else f"not {describe_value(op)}"
            raise _refuse(where, f'"op" must be "create" or "delete" ({shown_op})')
        obj = doc.get("object")
        if not isinstance(obj, dict):
            shown_obj = "missing" if "object" not in doc else f"not {describe_value(obj)}"
            raise _refuse(
                where, f'"object" must be a Kubernetes object, a JSON object ({shown_obj})'
            )
        kind = obj.get("kind")
        if kind is None:
            raise _refuse(where, f"object.kind is missing: a trace holds {_KINDS_TEXT}")
        if kind not in TRACE_KINDS:
            shown_kind = quote(kind) if isinstance(kind, str) else describe_value(kind)
            raise _refuse(
                where, f"object.kind {shown_kind} is not one a trace holds: {_KINDS_TEXT}"
            )
        runs_ms = None
        if "runs" in doc:
            if op == DELETE:
                raise _refuse(where, '"runs" goes with a pod\'s create, not with a delete')
            if kind != POD_KIND:
                raise _refuse(where, f'"runs" is for pods: a {kind} does not run')
            runs_ms = _milliseconds(doc["runs"], "runs", where)
        if op == CREATE:
            event = self.create(where, number, t_ms, kind, obj, runs_ms)
        else:
            event = self.delete(where, number, t_ms, kind, obj)
        self.events.append(event)
        self.last = (t_ms, doc["t"], number)

    def create(
        self,
        where: str,
        number: int,
        t_ms: int,
        kind: str,
        obj: dict[str, Any],
        runs_ms: int | None,
    ) -> TraceEvent:
        # Imported here: it imports the kubernetes client's models (a second of start-up),
        # which a trace without a create, and whatever imports this module, need not pay.
        from drasnap.snapshot.ingest.conversion import convert_to_v1

        metadata = obj.get("metadata")
        if isinstance(metadata, dict) and not metadata.get("namespace"):
            # The module's documented default: no note per object (validation would add one).
            obj = {**obj, "metadata": {**metadata, "namespace": DEFAULT_NAMESPACE}}
        notes: list[str] = []
        try:
            checked = convert_to_v1(obj, source=where, warnings=notes)
        except ObjectValidationError as exc:
            raise ScenarioError(one_line(exc)) from None
        key = object_key(checked)
        ident = (kind, key)
        if ident in self.live:
            raise _refuse(
                where, f"{kind} {key} already exists ({self.origin(ident)}): delete it first"
            )
        if kind == POD_KIND:
            self.check_pod(where, key, checked)
        else:
            claims, templates = ([checked], []) if kind == CLAIM_KIND else ([], [checked])
            try:
                check_dra_objects(
                    (), claims, templates, features=self.features, class_names=self.classes
                )
            except ObjectValidationError as exc:
                raise _refuse(where, str(exc)) from None
        self.live[ident] = number
        self.deleted.pop(ident, None)
        self.notes.extend(notes)
        return TraceEvent(t_ms, CREATE, kind, key, checked, runs_ms, number)

    def check_pod(self, where: str, key: str, pod: dict[str, Any]) -> None:
        spec = pod.get("spec") or {}
        node = spec.get("nodeName")
        if node:
            # A bound pod would skip the simulated scheduler, and its node may not exist then.
            raise _refuse(
                where,
                f"Pod {key}: spec.nodeName is set ({quote(node)}): a trace's pods arrive "
                "unscheduled, the simulated scheduler binds them",
            )
        namespace = key.partition("/")[0]
        for i, ref in enumerate(spec.get("resourceClaims") or ()):
            for field, ref_kind in _POD_CLAIM_FIELDS:
                name = ref.get(field)
                if not name:
                    continue
                target = (ref_kind, f"{namespace}/{name}")
                if target not in self.live:
                    raise _refuse(
                        where,
                        f"Pod {key}: spec.resourceClaims[{i}].{field}: {ref_kind} "
                        f"{target[1]} {self.absence(target)}",
                    )

    def delete(
        self, where: str, number: int, t_ms: int, kind: str, obj: dict[str, Any]
    ) -> TraceEvent:
        metadata = obj.get("metadata")
        name = metadata.get("name") if isinstance(metadata, dict) else None
        if not isinstance(metadata, dict) or not isinstance(name, str) or not name:
            raise _refuse(
                where,
                "object.metadata.name must name the object deleted (a delete names it by kind, "
                "metadata.namespace and metadata.name)",
            )
        namespace = metadata.get("namespace")
        if namespace is not None and not isinstance(namespace, str):
            raise _refuse(
                where,
                f"object.metadata.namespace must be a string, not {describe_value(namespace)}",
            )
        namespace = namespace or DEFAULT_NAMESPACE
        key = f"{namespace}/{name}"
        ident = (kind, key)
        if ident not in self.live:
            raise _refuse(where, f"delete of {kind} {key}, which {self.absence(ident)}")
        del self.live[ident]
        self.deleted[ident] = number
        named = {**obj, "metadata": {**metadata, "namespace": namespace}}
        return TraceEvent(t_ms, DELETE, kind, key, named, None, number)

    def origin(self, ident: _Ident) -> str:
        line = self.live[ident]
        return "in the starting cluster" if line == 0 else f"created at line {line}"

    def absence(self, ident: _Ident) -> str:
        """Why ``ident`` does not exist at the current line, for a message."""
        line = self.deleted.get(ident)
        if line is not None:
            return f"was deleted at line {line} (and not created again since)"
        return "is neither in the starting cluster nor created earlier in the trace"


def _milliseconds(value: Any, name: str, where: str) -> int:
    """A number of seconds (``t``, ``runs``) as whole milliseconds, exactly."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise _refuse(where, f'"{name}" must be a number of seconds, not {describe_value(value)}')
    if value < 0:
        what = "a time from the start" if name == "t" else "a run time"
        raise _refuse(where, f'"{name}" is negative ({value!r}): {what} is 0 or more seconds')
    if isinstance(value, int):
        ms = value * 1000
    else:
        # (orjson refuses NaN and infinities as not JSON: a float here is finite)
        exact = Decimal(repr(value)) * 1000
        if exact != exact.to_integral_value():
            raise _refuse(
                where,
                f'"{name}" {value!r} is not a whole number of milliseconds: drasnap\'s clock '
                "counts milliseconds",
            )
        ms = int(exact)
    if ms > MAX_MS:
        raise _refuse(
            where,
            f'"{name}" {value!r} is too large: the longest time is {format_duration(MAX_MS)} '
            "(Go's limit)",
        )
    return ms


def _refuse(where: str, what: str) -> ScenarioError:
    # One line whatever the message quotes (a value from the file, a validation message).
    return ScenarioError(one_line(f"{where}: {what}"))
