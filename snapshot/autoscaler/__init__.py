"""One cluster-autoscaler loop's pure algorithms, on a :class:`snapshot.ClusterSnapshot`.

``estimator`` is the binpacking estimator (how many nodes of a group the pending pods need),
``expanders`` choose among node groups (least-waste, most-pods, priority, random), and
``utilization`` computes a node's utilization for scale-down, DRA devices included. They follow
upstream's ``cluster-autoscaler/estimator``, ``expander`` and ``simulator/utilization``; the
scenario that strings them into a loop, with its run record, is ``tools.scenarios.autoscale``.
"""
