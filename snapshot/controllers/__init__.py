"""What Kubernetes' controllers would create, deterministically: the pods of Deployments,
ReplicaSets, StatefulSets and Jobs (``workloads``), and the ResourceClaims of a pod's claim
templates (``claim_templates``, as the resourceclaim controller names them).

Pure functions of objects: it never imports ``store``, the snapshots or the simulations.
"""
