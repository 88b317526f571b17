"""The Kubernetes vocabulary the rest of the snapshot speaks: kind names and API versions, the
one ``namespace/name`` key and the one way to read a name or label (``kinds``, ``objects``),
quantities and semantic versions as CEL sees them, feature gates, core/v1 NodeSelector
matching, and pure helpers for ResourceClaims.

The ground floor: it imports only ``snapshot.errors``, never ``store``.
"""
