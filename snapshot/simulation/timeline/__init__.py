"""``drasnap simulate timeline``: the cluster-autoscaler over hours and days on a simulated
clock, the scheduler between its loops, driven by a trace (docs/timelines.md: what upstream
does, rule by rule, and this package's design).

- :mod:`.state`: what the cluster-autoscaler and the simulated cloud keep between loops, one
  record at depth 0;
- :mod:`.records`: what the run writes for people to read (a pod's life, a node's, a loop's);
- :mod:`.scheduler`: kube-scheduler between loops (filters, then the default profile's scores);
- :mod:`.ca_loop`: one loop, built on the autoscale scenario's steps, simulated in a fork that
  is reverted; only its decisions reach depth 0;
- :mod:`.engine`: the clock: events in time order, one step per scan tick, idle loops skipped;
- :mod:`.totals`: the run's totals (node-hours, cost, waits).
"""
