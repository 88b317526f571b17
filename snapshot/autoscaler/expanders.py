"""Expanders: which node group a scale-up grows, among the groups that can help.

Upstream: ``cluster-autoscaler/expander`` (``waste``, ``mostpods``, ``leastnodes``, ``priority``,
``random``) and the expander factory, which chains the ``--expander`` names given
(``priority,least-waste``) and breaks what ties remain at random. ``random`` here draws from
the run's seed, so a run is repeatable.

The chain runs each expander in turn, even on a single option, and stops at the first that
leaves exactly one (``factory/chain.go``); an expander may leave none (least-nodes), and the
rest then keep none: no option is chosen.

- ``least-waste``: per option, the nodes' cpu and memory capacity (``status.capacity``, as
  upstream; allocatable when a node states no capacity) times the node count, minus the option
  pods' requests (the pod's, init containers and overhead counted, as ``PodRequests``), as
  fractions; their sum is the waste; the least wins (ties kept).
- ``most-pods``: the options placing the most pods.
- ``least-nodes``: the options adding the fewest nodes, options adding none left out
  (``expander/leastnodes``).
- ``priority``: the options whose group name matches a regular expression (searched, not
  anchored, as Go's ``FindStringIndex``) of the highest priority; none matching: all options.
- ``random``: one option, drawn (a lone option is kept without a draw).
"""

from __future__ import annotations

import random
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from drasnap.snapshot.autoscaler.expander_names import EXPANDERS
from drasnap.snapshot.k8s.objects import KubeObject
from drasnap.snapshot.k8s.quantity import quantity_value
from drasnap.snapshot.scheduling import compute_pod_requests, node_allocatable_requests

__all__ = ["EXPANDERS", "STRATEGIES", "Option", "choose", "waste"]


@dataclass(frozen=True)
class Option:
    """Growing ``group`` by ``node_count`` nodes like ``template`` places ``pods``."""

    group: str
    node_count: int
    pods: Sequence[KubeObject]
    template: KubeObject


def _capacity(node: KubeObject) -> tuple[int, int]:
    status = node.get("status") or {}
    capacity = status.get("capacity") or {}
    alloc = node_allocatable_requests(node)
    cpu = capacity.get("cpu")
    memory = capacity.get("memory")
    return (
        int(quantity_value(str(cpu)) * 1000) if cpu is not None else alloc.cpu,
        int(quantity_value(str(memory))) if memory is not None else alloc.memory,
    )


def waste(option: Option) -> float:
    """The option's wasted cpu fraction plus its wasted memory fraction."""
    cpu = memory = 0
    for pod in option.pods:
        requested = compute_pod_requests(pod)
        cpu += requested.cpu
        memory += requested.memory
    node_cpu, node_memory = _capacity(option.template)
    avail_cpu = node_cpu * option.node_count
    avail_memory = node_memory * option.node_count
    wasted_cpu = (avail_cpu - cpu) / avail_cpu if avail_cpu else 0.0
    wasted_memory = (avail_memory - memory) / avail_memory if avail_memory else 0.0
    return wasted_cpu + wasted_memory


def _least_waste(options: list[Option]) -> list[Option]:
    if not options:
        return []
    scores = [waste(o) for o in options]
    least = min(scores)
    return [o for o, s in zip(options, scores, strict=True) if s == least]


def _most_pods(options: list[Option]) -> list[Option]:
    if not options:
        return []
    most = max(len(o.pods) for o in options)
    return [o for o in options if len(o.pods) == most]


def _priority(options: list[Option], priorities: Mapping[int, Sequence[str]]) -> list[Option]:
    best: list[Option] = []
    top: int | None = None
    for option in options:
        matched = [
            p
            for p, patterns in priorities.items()
            if any(re.search(x, option.group) for x in patterns)
        ]
        if not matched:
            continue
        prio = max(matched)
        if top is None or prio > top:
            top, best = prio, [option]
        elif prio == top:
            best.append(option)
    return best or options


def _least_nodes(options: list[Option]) -> list[Option]:
    adding = [o for o in options if o.node_count != 0]  # upstream skips these ("just in case")
    if not adding:
        return []
    fewest = min(o.node_count for o in adding)
    return [o for o in adding if o.node_count == fewest]


def _random(options: list[Option], rng: random.Random) -> list[Option]:
    # A lone option needs no draw (upstream's draw among one is always it); drawing anyway
    # would move the run's random stream.
    return options if len(options) <= 1 else [rng.choice(options)]


Strategy = Callable[[list[Option], random.Random, Mapping[int, Sequence[str]]], list[Option]]

#: Each expander by its ``--expander`` name (``EXPANDERS``, in that order): the options it keeps.
STRATEGIES: dict[str, Strategy] = {
    "least-waste": lambda options, _rng, _prio: _least_waste(options),
    "most-pods": lambda options, _rng, _prio: _most_pods(options),
    "least-nodes": lambda options, _rng, _prio: _least_nodes(options),
    "priority": lambda options, _rng, prio: _priority(options, prio),
    "random": lambda options, rng, _prio: _random(options, rng),
}


def choose(
    options: Sequence[Option],
    expanders: Sequence[str],
    rng: random.Random,
    priorities: Mapping[int, Sequence[str]] | None = None,
) -> Option | None:
    """The option the chain of ``expanders`` picks; ties left are drawn from ``rng``."""
    remaining = list(options)
    for name in expanders:
        remaining = STRATEGIES[name](remaining, rng, priorities or {})
        if len(remaining) == 1:
            return remaining[0]
    if not remaining:
        return None
    return remaining[0] if len(remaining) == 1 else rng.choice(remaining)
