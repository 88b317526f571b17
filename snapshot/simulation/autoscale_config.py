"""The autoscale scenario's inputs beside the manifests: node groups and expander priorities.

``--node-groups FILE`` (YAML) replaces the node groups read from node labels::

    nodeGroups:
      - name: a100           # nodes labelled drasnap.io/node-group=a100 are its members
        minSize: 0           # scale-down keeps at least this many (default 0)
        maxSize: 4           # scale-up grows it to at most this many (default: no limit)
        node: gpu-a100-0     # the template: a node of --from, with its local slices
      - name: h100
        maxSize: 2
        node: {apiVersion: v1, kind: Node, metadata: {name: h100-template}, status: ...}
        slices: [...]        # ResourceSlices of that node (nodeName: h100-template)

``--expander-priorities FILE`` is the priority expander's configuration, in upstream's shape:
the ``cluster-autoscaler-priority-expander`` ConfigMap (its ``data.priorities`` YAML text), or
that YAML alone: a priority (integer, higher wins) to a list of regular expressions matched
against group names.

A template node is sanitized as upstream's ``TemplateNodeInfoFromExampleNodeInfo`` does for
a node it copies (``simulator/node_info_utils.go``): the cluster-autoscaler's own taints
(``ToBeDeletedByClusterAutoscaler``, ``DeletionCandidateOfClusterAutoscaler``) and the node
condition taints (``node.kubernetes.io/*``: not-ready, unreachable, ...) are dropped, and so is
``spec.unschedulable`` (a cordoned example node makes schedulable new nodes).
"""

from __future__ import annotations

import hashlib
import re
from pathlib import Path
from typing import Any

from drasnap.snapshot.errors import ManifestError, ObjectValidationError, ScenarioError, one_line
from drasnap.snapshot.ingest.limits import read_input
from drasnap.snapshot.k8s.objects import KubeObject, name_of
from drasnap.snapshot.simulation.inputs import NodeGroup, StartingObjects
from drasnap.snapshot.simulation.settings import TAKES, Settings

_AUTOSCALER_TAINTS = ("ToBeDeletedByClusterAutoscaler", "DeletionCandidateOfClusterAutoscaler")
_CONDITION_TAINT_PREFIX = "node.kubernetes.io/"
PRIORITY_CONFIGMAP = "cluster-autoscaler-priority-expander"


def files_digest(source_digest: str, *files: str | None) -> str:
    """The digest a resumed autoscale run must see again: the manifests' and the files'."""
    h = hashlib.blake2b(source_digest.encode(), digest_size=16)
    for file in files:
        if file is not None:
            h.update(file.encode())
            h.update(read_input(Path(file)))  # (bounded: read before the file is loaded)
    return h.hexdigest()


#: A node group's fields only a timeline reads (docs/timelines.md 2.1): its price per node-hour,
#: how long its nodes take to become Ready (else --node-provision-time), how long after that
#: their slices come (else --slice-publish-lag), and ``provisioning: fail`` for a group whose
#: scale-ups never deliver a node, ``scaleDown: taint-fails`` for one whose nodes cannot be
#: tainted (the one failure of a scale-down CA sees at once: --scale-down-delay-after-failure).
TIMELINE_GROUP_FIELDS = frozenset(
    {"cost", "nodeProvisionTime", "provisioning", "slicePublishLag", "scaleDown"}
)


def configure(cluster: StartingObjects, settings: Settings) -> StartingObjects:
    """Apply the node-group and priority files of ``settings`` to ``cluster``.

    Raises:
        ScenarioError: a file is unreadable or not in its shape.
    """
    if settings.node_groups_file is not None:
        timeline = "node_provision_time" in TAKES[settings.scenario]
        cluster.groups = _node_groups(Path(settings.node_groups_file), cluster, timeline)
    point = settings.sweep or {}
    if point.get("node_groups"):
        timeline = "node_provision_time" in TAKES[settings.scenario]
        cluster.groups = changed_groups(
            cluster, point["node_groups"], str(point["where"]), timeline=timeline
        )
    if settings.expander_priorities is not None:
        cluster.priorities = _priorities(Path(settings.expander_priorities))
    cluster.groups = [sanitized(g) for g in cluster.groups]
    return cluster


def sanitized(group: NodeGroup) -> NodeGroup:
    """The group with its template node sanitized (module docstring)."""
    spec = dict(group.node.get("spec") or {})
    taints = [
        t
        for t in spec.get("taints") or ()
        if t.get("key") not in _AUTOSCALER_TAINTS
        and not str(t.get("key", "")).startswith(_CONDITION_TAINT_PREFIX)
    ]
    if taints:
        spec["taints"] = taints
    else:
        spec.pop("taints", None)
    spec.pop("unschedulable", None)
    node = {**group.node, "spec": spec}
    return NodeGroup(group.name, node, group.slices, group.min_size, group.max_size, group.options)


def _read_yaml(path: Path) -> Any:
    import yaml  # only node-group and priority files need it: not a preset's start
    from drasnap.snapshot.ingest.limits import load_yaml

    try:
        return load_yaml(path)
    except ManifestError as exc:  # unreadable, too large, an alias bomb, several documents
        raise ScenarioError(str(exc)) from exc
    except yaml.YAMLError as exc:
        raise ScenarioError(f"{path}: not YAML: {one_line(exc)}") from exc


def _size(path: Path | str, name: str, entry: dict[str, Any], key: str) -> int | None:
    value = entry.get(key)
    if value is None:
        return None
    if not isinstance(value, int) or isinstance(value, bool) or value < 0:
        raise ScenarioError(f"{path}: node group {name!r}: {key} must be a whole number >= 0")
    return value


def changed_groups(
    cluster: StartingObjects, changes: dict[str, Any], where: str, *, timeline: bool = False
) -> list[NodeGroup]:
    """The cluster's node groups with a sweep point's changes: ``remove`` (names), ``change``
    (entries naming a group, each field given replacing the group's), ``add`` (entries as a
    node-group file has them; a timeline's, TIMELINE_GROUP_FIELDS too). ``where`` names the
    variant in errors.

    Raises:
        ScenarioError: a group removed or changed that does not exist, one added twice, or an
            entry not in a node-group file's shape.
    """
    groups = {g.name: g for g in cluster.groups}
    for name in changes.get("remove") or ():
        if name not in groups:
            raise ScenarioError(f"{where}: remove: no node group {name!r} in the base cluster")
        del groups[name]
    for entry in changes.get("change") or ():
        name = entry["name"]
        old = groups.get(name)
        if old is None:
            raise ScenarioError(f"{where}: change: no node group {name!r} in the base cluster")
        full: dict[str, Any] = {
            "name": name,
            "minSize": old.min_size,
            "node": old.node,
            "slices": old.slices,
            **({"maxSize": old.max_size} if old.max_size is not None else {}),
            **(old.options if timeline else {}),
            **entry,
        }
        if isinstance(entry.get("node"), str) and "slices" not in entry:
            del full["slices"]
        (groups[name],) = _parse_groups(f"{where}: change", [full], cluster, timeline=timeline)
    added = list(changes.get("add") or ())
    for new in _parse_groups(f"{where}: add", added, cluster, timeline=timeline):
        if new.name in groups:
            raise ScenarioError(f"{where}: add: node group {new.name!r} exists already")
        groups[new.name] = new
    return list(groups.values())


def priced(groups: list[NodeGroup], settings: Settings) -> list[NodeGroup]:
    """A timeline sweep point's groups with the sweep's costs (its ``cost:`` and the costs its
    node-group variant gives) as each group's ``cost`` option, which the timeline's
    ``cluster_cost`` reads. Called once every group is known (Alibaba's trace brings its own).

    Raises:
        ScenarioError: a cost names a group the point's cluster does not have (a typo would
            otherwise leave that group's nodes out of the cost).
    """
    point = settings.sweep or {}
    costs: dict[str, float] = point.get("cost") or {}
    if not costs:
        return groups
    names = [g.name for g in groups]
    unknown = sorted(set(costs) - set(names))
    if unknown:
        missing = ", ".join(map(repr, unknown))
        raise ScenarioError(
            f"{point.get('where', 'the sweep')}: cost: no node group {missing} (its groups: "
            f"{', '.join(names) or 'none'})"
        )
    return [
        NodeGroup(
            g.name,
            g.node,
            g.slices,
            g.min_size,
            g.max_size,
            {**g.options, "cost": costs[g.name]} if g.name in costs else g.options,
        )
        for g in groups
    ]


def _node_groups(path: Path, cluster: StartingObjects, timeline: bool) -> list[NodeGroup]:
    data = _read_yaml(path)
    entries = data.get("nodeGroups") if isinstance(data, dict) else data
    if not isinstance(entries, list) or not entries:
        raise ScenarioError(f"{path}: expected nodeGroups: a list of node groups")
    return _parse_groups(str(path), entries, cluster, timeline=timeline)


def _group_options(path: str, name: str, entry: dict[str, Any]) -> dict[str, Any]:
    """A timeline group's own fields, checked (TIMELINE_GROUP_FIELDS)."""
    from drasnap.snapshot.simulation.durations import format_duration, parse_duration

    options: dict[str, Any] = {}
    where = f"{path}: node group {name!r}"
    if "cost" in entry:
        cost = entry["cost"]
        if isinstance(cost, bool) or not isinstance(cost, int | float) or not cost >= 0:
            raise ScenarioError(f"{where}: cost must be a number >= 0 (per node-hour)")
        options["cost"] = float(cost)
    if "nodeProvisionTime" in entry:
        ms = parse_duration(str(entry["nodeProvisionTime"]), f"{where}: nodeProvisionTime")
        options["nodeProvisionTime"] = format_duration(ms)
    if "slicePublishLag" in entry:
        ms = parse_duration(str(entry["slicePublishLag"]), f"{where}: slicePublishLag")
        if ms >= 15 * 60_000:
            raise ScenarioError(
                f"{where}: slicePublishLag must stay under CA's --max-node-startup-time (15m): "
                "a node unready longer is not modelled"
            )
        options["slicePublishLag"] = format_duration(ms)
    if "scaleDown" in entry:
        if entry["scaleDown"] not in ("ok", "taint-fails"):
            raise ScenarioError(f"{where}: scaleDown must be ok or taint-fails")
        options["scaleDown"] = entry["scaleDown"]
    if "provisioning" in entry:
        if entry["provisioning"] not in ("ok", "fail"):
            raise ScenarioError(f"{where}: provisioning must be ok or fail")
        options["provisioning"] = entry["provisioning"]
    return options


def _parse_groups(
    path: str, entries: list[Any], cluster: StartingObjects, *, timeline: bool = False
) -> list[NodeGroup]:
    nodes = {name_of(node): (node, slices) for node, slices, _pods in cluster.nodes}
    groups: list[NodeGroup] = []
    for i, entry in enumerate(entries):
        if not isinstance(entry, dict) or not isinstance(entry.get("name"), str):
            raise ScenarioError(f"{path}: node group {i}: expected a mapping with a name")
        name = entry["name"]
        if any(g.name == name for g in groups):
            raise ScenarioError(f"{path}: node group {name!r} is defined twice")
        fields = {"name", "minSize", "maxSize", "node", "slices"}
        unknown = sorted(set(entry) - fields - (TIMELINE_GROUP_FIELDS if timeline else set()))
        if unknown:
            raise ScenarioError(
                f"{path}: node group {name!r}: unknown field(s) {', '.join(unknown)}"
            )
        low = _size(path, name, entry, "minSize") or 0
        high = _size(path, name, entry, "maxSize")
        if high is not None and high < low:
            raise ScenarioError(f"{path}: node group {name!r}: maxSize {high} < minSize {low}")
        node = entry.get("node")
        if isinstance(node, str):
            if node not in nodes:
                raise ScenarioError(f"{path}: node group {name!r}: no node {node!r} in --from")
            if entry.get("slices") is not None:
                raise ScenarioError(
                    f"{path}: node group {name!r}: slices go with a node written out; a node "
                    "of --from brings its own"
                )
            template, slices = nodes[node]
        elif isinstance(node, dict):
            template, slices = _inline_template(path, name, node, entry.get("slices") or [])
        else:
            raise ScenarioError(
                f"{path}: node group {name!r}: node must name a node of --from or be a Node"
            )
        options = _group_options(path, name, entry) if timeline else {}
        groups.append(NodeGroup(name, template, list(slices), low, high, options))
    return groups


def _inline_template(
    path: Path | str, group: str, node: KubeObject, slices: Any
) -> tuple[KubeObject, list[KubeObject]]:
    if not isinstance(slices, list):
        raise ScenarioError(f"{path}: node group {group!r}: slices must be a list")
    import yaml

    node = {"apiVersion": "v1", "kind": "Node", **node}
    text = yaml.safe_dump_all([node, *slices])
    try:
        from drasnap.snapshot.ingest.manifests import parse_manifests  # see inputs

        m = parse_manifests(text, source=f"{path} node group {group!r}", strict=True)
    except ObjectValidationError as exc:
        raise ScenarioError(str(exc)) from exc
    if len(m.nodes) != 1 or len(m.slices) != len(slices):
        raise ScenarioError(
            f"{path}: node group {group!r}: node must be one Node, slices ResourceSlices"
        )
    (template,) = m.nodes
    for slice_ in m.slices:
        if (slice_.get("spec") or {}).get("nodeName") != name_of(template):
            raise ScenarioError(
                f"{path}: node group {group!r}: slice {name_of(slice_)} is not local to "
                f"{name_of(template)} (spec.nodeName)"
            )
    return template, list(m.slices)


def _priorities(path: Path) -> dict[int, list[str]]:
    import yaml
    from drasnap.snapshot.ingest.limits import load_yaml_text

    data = _read_yaml(path)
    if isinstance(data, dict) and data.get("kind") == "ConfigMap":
        text = (data.get("data") or {}).get("priorities")
        if not isinstance(text, str) or not text.strip():
            raise ScenarioError(
                f"{path}: ConfigMap {PRIORITY_CONFIGMAP} has no data.priorities; expected "
                "YAML mapping priorities to lists of regular expressions"
            )
        try:
            data = load_yaml_text(text, f"{path}: data.priorities")
        except ManifestError as exc:
            raise ScenarioError(str(exc)) from exc
        except yaml.YAMLError as exc:
            raise ScenarioError(f"{path}: data.priorities is not YAML: {exc}") from exc
    if not isinstance(data, dict) or not data:
        raise ScenarioError(
            f"{path}: expected priorities: an integer priority to a list of regular expressions"
        )
    priorities: dict[int, list[str]] = {}
    for prio, patterns in data.items():
        if not isinstance(prio, int) or isinstance(prio, bool):
            raise ScenarioError(f"{path}: priority {prio!r} is not an integer")
        if not isinstance(patterns, list) or not all(isinstance(p, str) for p in patterns):
            raise ScenarioError(f"{path}: priority {prio}: expected a list of regular expressions")
        for pattern in patterns:
            try:
                re.compile(pattern)
            except re.error as exc:
                raise ScenarioError(
                    f"{path}: can't compile regexp rule for priority {prio} and rule {pattern}: "
                    f"{exc}"
                ) from exc
        priorities[prio] = list(patterns)
    return priorities
