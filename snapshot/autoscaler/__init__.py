"""One cluster-autoscaler loop's pure algorithms, on a cluster snapshot.

``estimator`` is the binpacking estimator (how many nodes of a group the pending pods need),
``expanders`` choose among node groups (their names in ``expander_names``), ``drain``
says which pods may move off a node, ``utilization`` computes a node's utilization for
scale-down, DRA devices included, and ``status`` has the cluster-autoscaler's words for what a
loop did not do (NotTriggerScaleUp's text, UnremovableReason names). They follow upstream's
``cluster-autoscaler/estimator``, ``expander`` and ``simulator/drain``,
``simulator/utilization``, ``processors/status``.

It never imports the simulations (``snapshot.simulation`` strings these into a loop).
"""
