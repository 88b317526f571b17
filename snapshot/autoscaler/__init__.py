"""One cluster-autoscaler loop's pure algorithms, on a cluster snapshot.

``estimator`` is the binpacking estimator (how many nodes of a group the pending pods need),
``expanders`` choose among node groups (least-waste, most-pods, priority, random), ``drain``
says which pods may move off a node, and ``utilization`` computes a node's utilization for
scale-down, DRA devices included. They follow upstream's ``cluster-autoscaler/estimator``,
``expander`` and ``simulator/drain``, ``simulator/utilization``.

It never imports the simulations (``snapshot.simulation`` strings these into a loop).
"""
