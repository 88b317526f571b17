"""The starting cluster of a scenario: generated from the settings, or read from manifests.

From manifests (``--from DIR``, kubectl dumps): nodes, their slices and the pods bound to them
form the existing cluster; every claim and device class is tracked. For scale-up, pods without
``spec.nodeName`` are the pending pods (claims from templates are generated for them if the
dump has none yet), and node groups come from the ``drasnap.io/node-group`` label (else
``node.kubernetes.io/instance-type``): each group's template is its first node by name, with
that node's slices.
"""

from __future__ import annotations

import hashlib
import random
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from drasnap.snapshot.controllers.claim_templates import claims_from_templates, node_name_of
from drasnap.snapshot.errors import ScenarioError
from drasnap.snapshot.ingest.limits import read_input
from drasnap.snapshot.ingest.references import check_dra_objects
from drasnap.snapshot.k8s.kinds import object_key
from drasnap.snapshot.k8s.objects import KubeObject, name_of
from drasnap.snapshot.simulation import generated
from drasnap.snapshot.simulation.settings import ON_GIVEN_CLUSTER, Settings

INSTANCE_TYPE_LABEL = "node.kubernetes.io/instance-type"


@dataclass
class NodeGroup:
    name: str
    node: KubeObject  # the template node
    slices: list[KubeObject]
    min_size: int = 0  # autoscale: scale-down keeps at least this many nodes
    max_size: int | None = None  # autoscale: scale-up grows the group to at most this many
    # timeline: the node-groups file's cost (per node-hour), nodeProvisionTime, provisioning
    options: dict[str, Any] = field(default_factory=dict)


def group_of(node: KubeObject) -> str | None:
    """The node group a node belongs to: its ``drasnap.io/node-group`` label, else its
    ``node.kubernetes.io/instance-type`` label, else none."""
    labels = (node.get("metadata") or {}).get("labels") or {}
    group = labels.get(generated.GROUP_LABEL) or labels.get(INSTANCE_TYPE_LABEL)
    return str(group) if group else None


@dataclass
class StartingObjects:
    """Everything a scenario starts from."""

    classes: list[KubeObject] = field(default_factory=list)
    claims: list[KubeObject] = field(default_factory=list)
    nodes: list[tuple[KubeObject, list[KubeObject], list[KubeObject]]] = field(
        default_factory=list
    )  # (node, its slices, the pods bound to it)
    global_slices: list[KubeObject] = field(default_factory=list)
    taint_rules: list[KubeObject] = field(default_factory=list)  # DeviceTaintRules
    pending: list[KubeObject] = field(default_factory=list)
    groups: list[NodeGroup] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)  # what loading the manifests skipped or did
    priorities: dict[int, list[str]] | None = None  # autoscale: the priority expander's config
    templates: list[KubeObject] = field(default_factory=list)  # ResourceClaimTemplates (--from)
    trace: Any = None  # timeline: the trace read (snapshot.simulation.traces), checked


def source_digest(directory: Path) -> str:
    """A digest of every manifest file under ``directory``: a resumed run must see the same."""
    h = hashlib.blake2b(digest_size=16)
    for path in sorted(p for p in directory.rglob("*") if p.is_file()):
        if path.suffix in (".yaml", ".yml", ".json"):
            h.update(str(path.relative_to(directory)).encode())
            h.update(read_input(path))  # (bounded: read before the files are loaded)
    return h.hexdigest()


def build(settings: Settings, *, strict: bool = False) -> StartingObjects:
    """The starting cluster for ``settings``.

    ``strict``: refuse manifests of kinds the simulation does not use (else each is skipped
    with a note on the cluster's ``notes``)."""
    if settings.source is not None:
        return _from_manifests(settings, strict=strict)
    if settings.cluster_from_trace:
        return StartingObjects()  # the trace's node list gives the groups, starting empty
    if settings.scenario == "scale-up":
        return _generated_scale_up(settings)
    return _generated_scale_down(settings)


def _generated_scale_up(s: Settings) -> StartingObjects:
    if not s.dra:
        return _plain_scale_up(s)
    rng = random.Random(s.seed)
    partitionable = s.devices == "partitionable"
    template = (
        generated.partitionable_claim_template() if partitionable else generated.claim_template()
    )
    template_name = template["metadata"]["name"]
    templates = {f"{generated.NAMESPACE}/{template_name}": template}
    cluster = StartingObjects(classes=[generated.device_class()])
    names = [f"pending-{i:05d}" for i in range(s.pods)]
    rng.shuffle(names)  # the seed decides the order the estimator sees them in
    for name in names:
        pod, claims = claims_from_templates(generated.pod(name, rng, template_name), templates)
        cluster.pending.append(pod)
        cluster.claims.extend(claims)
    for i in range(s.node_groups):
        group = f"group-{i}"
        node_name = f"{group}-template"
        gpus = s.gpus >> i  # each further group has half the GPUs per node
        slices = (
            generated.partitionable_gpu_slices(node_name, gpus)
            if partitionable
            else [generated.gpu_slice(node_name, gpus)]
        )
        cluster.groups.append(NodeGroup(group, generated.node(node_name, group=group), slices))
    return cluster


def _generated_scale_down(s: Settings) -> StartingObjects:
    if not s.dra:
        return _plain_scale_down(s)
    rng = random.Random(s.seed)
    templates = {f"{generated.NAMESPACE}/{generated.TEMPLATE_NAME}": generated.claim_template()}
    cluster = StartingObjects(classes=[generated.device_class()])
    for n in range(s.nodes):
        node_name = f"node-{n:04d}"
        pods = []
        for j in range(s.pods_per_node):
            pod, claims = claims_from_templates(
                generated.pod(f"{node_name}-pod-{j}", rng), templates
            )
            pod = {**pod, "spec": {**pod["spec"], "nodeName": node_name}}
            (claim,) = claims
            claim = {
                **claim,
                "status": {
                    "allocation": generated.allocation(node_name, f"gpu-{j}"),
                    "reservedFor": [
                        {"resource": "pods", "name": name_of(pod), "uid": pod["metadata"]["uid"]}
                    ],
                },
            }
            cluster.claims.append(claim)
            pods.append(pod)
        cluster.nodes.append(
            (generated.node(node_name), [generated.gpu_slice(node_name, s.gpus)], pods)
        )
    return cluster


def _plain_scale_up(s: Settings) -> StartingObjects:
    """Upstream's ``BenchmarkRunOnceScaleUp`` shape (generated module docstring)."""
    rng = random.Random(s.seed)
    cluster = StartingObjects()
    names = [f"pending-{i:05d}" for i in range(s.pods)]
    rng.shuffle(names)
    share = generated.PLAIN_SCALE_UP_PODS_PER_NODE
    cluster.pending = [generated.plain_pod(name, rng, share=share) for name in names]
    for i in range(s.node_groups):
        group = f"group-{i}"
        node = generated.plain_node(f"{group}-template", group=group, halvings=i)
        cluster.groups.append(NodeGroup(group, node, []))
    return cluster


def _plain_scale_down(s: Settings) -> StartingObjects:
    """Upstream's ``BenchmarkRunOnceScaleDown`` shape (generated module docstring)."""
    rng = random.Random(s.seed)
    cluster = StartingObjects()
    share = generated.PLAIN_SCALE_DOWN_SHARE
    for n in range(s.nodes):
        node_name = f"node-{n:04d}"
        pods = []
        for j in range(s.pods_per_node):
            pod = generated.plain_pod(f"{node_name}-pod-{j}", rng, share=share, evictable=True)
            pods.append({**pod, "spec": {**pod["spec"], "nodeName": node_name}})
        cluster.nodes.append((generated.plain_node(node_name), [], pods))
    return cluster


def _from_manifests(s: Settings, *, strict: bool) -> StartingObjects:
    # Imported here: reading files means validating them with the kubernetes client's models,
    # whose import (most of a command's start-up: BENCHMARKS.md, design notes) a generated
    # preset does not need.
    from drasnap.snapshot.ingest.manifests import load_manifests

    assert s.source is not None
    m = load_manifests([s.source, *s.extra_manifests], strict=strict)
    # A claim naming a missing class, or a selector that does not compile, would otherwise
    # surface midway through the run.
    check_dra_objects(
        m.classes,
        m.claims,
        m.claim_templates,
        m.slices,
        features=s.feature_gates,
        taint_rules=m.taint_rules,
    )
    if not m.nodes and s.scenario == "scale-down":
        raise ScenarioError(f"{s.source} holds no Node objects: nothing to scale down")
    if not m.nodes and not (s.scenario in ON_GIVEN_CLUSTER and s.node_groups_file):
        # (autoscale with a node-group file may start from no node at all: groups at size 0)
        raise ScenarioError(
            f"{s.source} holds no Node objects: nothing to simulate (--from reads kubectl "
            "dumps of the cluster: nodes, pods, ResourceSlices, claims, classes)"
        )
    cluster = StartingObjects(
        classes=list(m.classes),
        claims=list(m.claims),
        taint_rules=list(m.taint_rules),
        notes=list(m.notes),
        templates=list(m.claim_templates),
    )
    templates = {object_key(t): t for t in m.claim_templates}
    slices_by_node: dict[str, list[KubeObject]] = {}
    for slice_ in m.slices:
        node = (slice_.get("spec") or {}).get("nodeName")
        if node:
            slices_by_node.setdefault(node, []).append(slice_)
        else:
            cluster.global_slices.append(slice_)
    pods_by_node: dict[str, list[KubeObject]] = {}
    known_claims = {object_key(c) for c in m.claims}
    for pod in m.pods:
        node = node_name_of(pod)
        if node is None:
            if s.scenario == "scale-up" or s.scenario in ON_GIVEN_CLUSTER:
                pod, claims = claims_from_templates(pod, templates)
                cluster.claims.extend(c for c in claims if object_key(c) not in known_claims)
                cluster.pending.append(pod)
            continue
        pods_by_node.setdefault(node, []).append(pod)
    node_names = {name_of(n) for n in m.nodes}
    strays = sorted(set(pods_by_node) - node_names)
    if strays:
        raise ScenarioError(
            f"{s.source}: pods are bound to nodes that are not in the manifests: "
            f"{', '.join(strays[:5])}"
        )
    for node in sorted(m.nodes, key=name_of):
        name = name_of(node)
        cluster.nodes.append((node, slices_by_node.get(name, []), pods_by_node.get(name, [])))
    if s.scenario == "scale-up" or s.scenario in ON_GIVEN_CLUSTER:
        groups: dict[str, KubeObject] = {}
        for node in sorted(m.nodes, key=name_of):
            group = group_of(node)
            if group and group not in groups:
                groups[group] = node
        if s.scenario in ON_GIVEN_CLUSTER:
            # Groups may come from a node-group file instead, and a cluster without pending
            # pods is still one to scale down (snapshot.simulation.autoscale_config).
            for group, node in groups.items():
                cluster.groups.append(NodeGroup(group, node, slices_by_node.get(name_of(node), [])))
            return cluster
        if not groups:
            raise ScenarioError(
                f"{s.source}: no node groups: label nodes with {generated.GROUP_LABEL} (or "
                f"{INSTANCE_TYPE_LABEL}); each group's first node is its template"
            )
        for group, node in groups.items():
            cluster.groups.append(NodeGroup(group, node, slices_by_node.get(name_of(node), [])))
        if not cluster.pending:
            raise ScenarioError(f"{s.source}: no pending pods (pods without spec.nodeName)")
    return cluster


def instantiate(group: NodeGroup, new_name: str) -> tuple[KubeObject, list[KubeObject]]:
    """A new node of ``group``: its template node and slices renamed (pool included)."""
    old = name_of(group.node)
    meta = dict(group.node.get("metadata") or {})
    meta["name"] = new_name
    meta.pop("uid", None)
    labels = dict(meta.get("labels") or {})
    if labels.get("kubernetes.io/hostname") == old:
        labels["kubernetes.io/hostname"] = new_name
    meta["labels"] = labels
    node = {**group.node, "metadata": meta}
    slices = []
    for i, slice_ in enumerate(group.slices):
        spec = dict(slice_.get("spec") or {})
        spec["nodeName"] = new_name
        pool = dict(spec.get("pool") or {})
        # Pool names are unique per driver, so a copy needs a pool of its own (upstream's
        # SanitizedNodeResourceSlices adds a suffix): the new node's name, or appended to it.
        name = pool.get("name")
        pool["name"] = new_name if name == old else f"{name}-{new_name}"
        spec["pool"] = pool
        slices.append(
            {**slice_, "metadata": {"name": f"{new_name}-{spec.get('driver')}-{i}"}, "spec": spec}
        )
    return node, slices
