"""Files and dumps in: manifests read and validated (``manifests``, ``reader``), older
``resource.k8s.io`` versions converted to v1 (``conversion``), and what a set of DRA objects
must satisfy together before a run writes any of them (``references``).

It never imports ``store``, the snapshots or the simulations.
"""
