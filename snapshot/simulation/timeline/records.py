"""What a timeline writes for people to read, at depth 0: each pod's life, each node's, and
each loop that decided something. ``drasnap inspect``, ``history`` and SQL read them as any
record; :mod:`.totals` sums them.

- ``PodLife/<ns>/<name>``: ``arrived`` (ms; None: pending before the start), ``created`` (the
  time CA ages it by; None: before the start), ``priority``, ``runs`` (ms a run takes once
  bound, None: until deleted), ``bound``, ``node``, ``group``, ``ends_at``, ``ended``,
  ``fate`` (None while it lives: ``completed``, ``deleted``, ``withdrawn`` (deleted while
  pending), ``evicted`` (its controller made ``<name>-e<k>``), ``lost`` (a bare pod evicted)),
  ``incarnation_of`` (the first incarnation's key, for a recreated pod), ``reason`` (why it
  waits, last said: the scheduler's, then the cluster-autoscaler's);
- ``TimelineNode/<name>``: ``group``, ``requested`` (the scale-up; 0 for a starting node),
  ``ready``, ``published`` (its ResourceSlices), ``deleted`` (the cloud bills from
  ``requested`` to ``deleted``), ``devices`` (:func:`physical_devices` of its slices);
- ``PodReason/<ns>/<name>/<t, 12 digits>/<by>``: why the pod waits, written when it changes
  (``by``: ``scheduler``, then ``cluster-autoscaler``): ``drasnap explain --pod`` reads them
  loop by loop (:func:`pod_story`);
- ``TimelineLoop/<t, 12 digits>``: a loop that changed something: ``t``, ``pending``,
  ``groups`` (per group: ready, provisioning, deleting), ``scaled_up``, ``deleted``,
  ``unneeded``, ``timed_out``.
"""

from __future__ import annotations

from typing import Any, Protocol

POD_LIFE = "PodLife"
NODE_LIFE = "TimelineNode"
LOOP_KIND = "TimelineLoop"
REASON_KIND = "PodReason"
TRACE_KIND = "TraceEvent"  # the trace, one record per event, written at the start
TEMPLATE_KIND = "ResourceClaimTemplate"  # the templates trace pods make their claims from


def loop_key(t_ms: int) -> str:
    return f"{t_ms:012d}"


def trace_key(index: int) -> str:
    return f"{index:010d}"


def reason_key(pod: str, t_ms: int, by: str) -> str:
    return f"{pod}/{t_ms:012d}/{by}"


class _Reader(Protocol):
    def get(self, kind: str, key: str, default: Any = None) -> Any: ...

    def items(self, kind: str) -> dict[str, Any]: ...


def pod_story(state: _Reader, pod: str) -> dict[str, Any] | None:
    """A timeline's pod: its life record and why it waited, in time order (``{"t": ms, "by",
    "reason"}``); None when the run holds no life of that pod (not a timeline's pod)."""
    life = state.get(POD_LIFE, pod)
    if life is None:
        return None
    prefix = f"{pod}/"
    reasons = []
    for key, value in sorted(state.items(REASON_KIND).items()):
        if key.startswith(prefix) and key.count("/") == pod.count("/") + 2:
            t, by = key[len(prefix) :].split("/")
            reasons.append({"t": int(t), "by": by, "reason": value})
    # At one instant the scheduler's pass comes before the loop.
    reasons.sort(key=lambda r: (r["t"], r["by"] != "scheduler"))
    return {"life": dict(life), "reasons": reasons}


def physical_devices(slices: list[Any]) -> int:
    """The devices a node's slices offer, each counted once: a pool with shared counters
    (partitionable devices, whose devices overlap) by its counter sets, others device by
    device."""
    found = 0
    for slice_ in slices:
        spec = slice_.get("spec") or {}
        if spec.get("sharedCounters"):
            found += len(spec["sharedCounters"])
        else:
            found += sum(1 for d in spec.get("devices") or () if not d.get("consumesCounters"))
    return found
