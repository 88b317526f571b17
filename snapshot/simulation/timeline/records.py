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
  ``ready``, ``deleted`` (the cloud bills from ``requested`` to ``deleted``);
- ``TimelineLoop/<t, 12 digits>``: a loop that changed something: ``t``, ``pending``,
  ``groups`` (per group: ready, provisioning, deleting), ``scaled_up``, ``deleted``,
  ``unneeded``, ``timed_out``.
"""

from __future__ import annotations

POD_LIFE = "PodLife"
NODE_LIFE = "TimelineNode"
LOOP_KIND = "TimelineLoop"
TRACE_KIND = "TraceEvent"  # the trace, one record per event, written at the start
TEMPLATE_KIND = "ResourceClaimTemplate"  # the templates trace pods make their claims from


def loop_key(t_ms: int) -> str:
    return f"{t_ms:012d}"


def trace_key(index: int) -> str:
    return f"{index:010d}"
