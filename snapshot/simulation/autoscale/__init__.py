"""Autoscale: what one cluster-autoscaler loop (``StaticAutoscaler.RunOnce``) decides for the
cluster of ``--from``, by the cluster-autoscaler's code (README's table gives each source path).

0. Pending pods (no ``spec.nodeName``) of a priority under ``--expendable-pods-priority-cutoff``
   are ignored, and so are pods nominated to a node (warned about). The rest, highest
   ``spec.priority`` first, are packed on the existing nodes: each on the first node that fits,
   starting one past the node that took the previous pod (filterOutSchedulableByPacking through
   RunFiltersUntilPassingNode and lastIndexOrderMapping; nodes by name, one of CA's orders).
   Those that fit no node keep the scheduler's answer (``0/N nodes are available: ...``).
1. For each node group, the binpacking estimator (:mod:`snapshot.autoscaler.estimator`) places
   the rest on new nodes from the group's template, in a fork that is reverted, adding at most
   ``maxSize`` minus the group's current size and ``--max-nodes-per-scaleup``. A group at its
   maximum is skipped (``max node group size reached``).
2. The expander chain (``--expander``, :mod:`snapshot.autoscaler.expanders`) chooses among the
   groups that place some pod; that group's expansion is applied (fork, estimate, commit).
   A pod left pending gets its reason: the scheduler's answer, then ``pod didn't trigger
   scale-up: ...`` with each group's reason counted, as the NotTriggerScaleUp event says it.
3. Scale-down, simulated in one fork that is reverted: every candidate's utilization is
   measured first (a node at exactly ``--scale-down-utilization-threshold`` is a candidate);
   then, empty candidates first, each removal is simulated: its pods (drain rules,
   :mod:`snapshot.autoscaler.drain`, with CA's ``--skip-nodes-with-*`` flags) placed on the
   other nodes round robin, a success persisting for the next candidates. Of the unneeded
   nodes, empty ones first, those that keep their group above ``minSize`` are deleted within
   ``--max-scale-down-parallelism`` and ``--max-drain-parallelism``.
4. The deletions are applied: each chosen node removed, its pods where the simulation put them.

Not modelled, said in the README: the waiting times (``--scale-down-unneeded-time``,
``--scale-down-delay-after-add``), PodDisruptionBudgets, balancing similar groups, unready
nodes (warned about), resource limits.

Steps (each ends at depth 0 with the run record): 0 places on existing nodes; 1..G estimate
group i; G+1 applies the expander's choice; G+2 simulates the scale-down; G+3 applies it. The
run record holds only counts (it is rewritten at every step); each decision is written once,
at depth 0, under ``AutoscaleDecision``: ``pod/<ns>/<name>`` (the existing node it went to, or
the scheduler's answer; the new node, or why it stays pending), ``estimate/<group>`` (nodes,
pods placed, each other pod's reason), ``scale-up`` (the group chosen, nodes added),
``scale-down`` (the unneeded nodes, where their pods go, the nodes deleted), ``node/<name>``
(removed, or the reason it is kept), ``ignored``, ``cursor`` and ``warnings``.
:func:`decisions` reads them back, for the result and for ``drasnap inspect``. Pending pods and
node groups are kept as scale-up keeps them (``PendingPod``, ``NodeGroup``).

Housed along upstream's ``cluster-autoscaler/core`` folders: :mod:`.loop` (``RunOnce``: the
setup and the steps), :mod:`.pod_list` (``core/podlistprocessor``: step 0), :mod:`.scale_up`
(``core/scaleup``: the estimates and the expander's choice), :mod:`.scale_down`
(``core/scaledown``: eligibility, the planner, the budgets, the actuation), :mod:`.records`
(the decisions written and read back) and :mod:`.flags` (CA's flags as a run recorded them).
Like the rest of the simulation it never imports ``drasnap.tools``.
"""
