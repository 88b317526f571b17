"""What the cluster-autoscaler and the simulated cloud keep between loops.

One JSON record, ``TimelineState/state``, at depth 0, rewritten at a step's end when it changed:
the run resumes from it (with the store's cluster, the pods' lives and the trace). Times are
milliseconds of simulated time.

- ``requests``: per node group, the scale-up in flight, as ``clusterstate`` keeps it
  (``registerOrUpdateScaleUpNoLock``): ``increase``, ``time``, ``expected`` (time +
  ``--max-node-provision-time``);
- ``backoff``: per node group (``utils/backoff/exponential_backoff.go``): ``until``,
  ``duration``, ``failed`` (the last failure);
- ``unneeded``: node -> since (``core/scaledown/unneeded/nodes.go``);
- ``unremovable``: node -> [when it is tried again (``core/scaledown/unremovable``), the
  ``epoch`` it failed in];
- ``epoch``: how many times the world changed (an instant's events, a loop that decided
  something): a recheck in the same epoch as its failure fails again (engine, idle loops);
- ``last``: the last scale-up, deletion and failed deletion (``StaticAutoscaler``'s times,
  an hour before the start at first, as upstream sets them "so as to not start in cooldown");
- ``target``: each node group's target size; ``instances``: the cloud's instances not yet
  registered (name -> group, ready_at); ``deleting``: tainted nodes -> when they go;
  ``slices``: registered nodes whose ResourceSlices are not published yet -> when they are;
  ``serial``: per group, the next instance number;
- ``now``: the last instant processed; ``trace``: the index of the next trace event.
"""

from __future__ import annotations

from typing import Any

import orjson

STATE_KIND = "TimelineState"
STATE_KEY = "state"

#: upstream: ``initialScaleTime := time.Now().Add(-time.Hour)`` (core/static_autoscaler.go)
START_OFFSET_MS = -3_600_000


def initial(targets: dict[str, int]) -> dict[str, Any]:
    return {
        "requests": {},
        "backoff": {},
        "unneeded": {},
        "unremovable": {},
        "epoch": 0,
        "last": {"scale_up": START_OFFSET_MS, "delete": START_OFFSET_MS, "fail": START_OFFSET_MS},
        "target": dict(targets),
        "instances": {},
        "deleting": {},
        "slices": {},
        "serial": {},
        "now": -1,
        "trace": 0,
    }


def snapshot(state: dict[str, Any]) -> dict[str, Any]:
    """A copy to compare with later (JSON values: a round trip through orjson is a deep copy,
    several times faster than ``copy.deepcopy``)."""
    copied: dict[str, Any] = orjson.loads(orjson.dumps(state))
    return copied
