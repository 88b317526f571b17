"""Which pods of a node move, stay or block its removal, on upstream's own tests
(kubernetes/autoscaler a16f0ae8): ``simulator/drain_test.go`` TestGetPodsToMove (the default
rules with ``--skip-nodes-with-system-pods``, ``--skip-nodes-with-local-storage`` and
``--skip-nodes-with-custom-controller-pods`` on, as drasnap's defaults) and the rule tables of
``simulator/drainability/rules/*/rule_test.go``. Each test names the upstream test and case.

How upstream's answer reads in drasnap's :class:`Drain`: ``Pods`` is ``move``;
``DaemonSetPods`` plus the mirror pods upstream skips are ``stay``; ``BlockingPod`` is
``blocked``, (pod key, the rule's error text). Upstream's cases with custom rules ("Rule
allows", "Second rule blocks", ...) are left out: drasnap's rules are fixed. Cases that need the
loop's time (long-terminating pods, ``--blocking-system-pod-distruption-timeout``) or
PodDisruptionBudgets, which drasnap does not read, are strict xfails.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pytest
from drasnap.snapshot.autoscaler.drain import drain
from drasnap.snapshot.k8s.kinds import key_of

from tests.snapshot.autoscaler.builders import build_pod, owner

Obj = dict[str, Any]

MIRROR = {"kubernetes.io/config.mirror": "something"}
SAFE_TO_EVICT = "cluster-autoscaler.kubernetes.io/safe-to-evict"
LOCAL_VOLUMES = "cluster-autoscaler.kubernetes.io/safe-to-evict-local-volumes"

# The rules' error texts (rule.go of each rule), by upstream's BlockingPodReason.
MESSAGES = {
    "NotReplicated": "{namespace}/{name} is not replicated",
    "UnmovableKubeSystemPod": (
        "non-daemonset, non-mirrored, non-pdb-assigned kube-system pod present: {name}"
    ),
    "NotSafeToEvictAnnotation": "pod annotated as not safe to evict present: {name}",
    "LocalStorageRequested": "pod with local storage present: {name}",
    "NotEnoughPdb": "not enough pod disruption budget to move {namespace}/{name}",
}

# TestGetPodsToMove's testTime is 2020-12-18T17:00:00Z, its bspDisruptionTimeout an hour.
BEFORE_BSP_TIMEOUT = "2020-12-18T15:59:00Z"  # created an hour and a minute before testTime
AFTER_BSP_TIMEOUT = "2020-12-18T16:01:00Z"  # created 59 minutes before testTime


def pod(name: str, namespace: str = "default", **kwargs: Any) -> Obj:
    """A pod without requests (the drain rules never read them)."""
    return build_pod(name, namespace=namespace, **kwargs)


def empty_dir(name: str, medium: str = "") -> Obj:
    return {"name": name, "emptyDir": {"medium": medium} if medium else {}}


RS = owner("rs", "ReplicaSet", "extensions/v1beta1")
RC = owner("rc", "ReplicationController", "core/v1")

UNREPLICATED = pod("unreplicatedPod", "ns")
MANIFEST = pod("manifestPod", "kube-system", annotations=MIRROR)
SYSTEM = pod("systemPod", "kube-system", owners=RS)
DRAINABLE_BLOCKING_SYSTEM = pod(
    "systemPod", "kube-system", owners=RS, metadata={"creationTimestamp": BEFORE_BSP_TIMEOUT}
)
NON_DRAINABLE_BLOCKING_SYSTEM = pod(
    "systemPod", "kube-system", owners=RS, metadata={"creationTimestamp": AFTER_BSP_TIMEOUT}
)
LOCAL_STORAGE = pod("localStoragePod", "ns", owners=RS, volumes=[empty_dir("empty-vol")])
NON_LOCAL_STORAGE = pod(
    "nonLocalStoragePod",
    "ns",
    owners=RS,
    volumes=[{"name": "my-repo", "gitRepo": {"repository": "my-repo"}}],
)
PDB_POD = pod("pdbPod", "ns", owners=RS, labels={"critical": "true"})
TERMINATED = pod(
    "terminatedPod", "ns", owners=RS, metadata={"deletionTimestamp": "2020-12-18T16:58:30Z"}
)
TERMINATING = pod(
    "terminatingPod", "ns", owners=RS, metadata={"deletionTimestamp": "2020-12-18T17:00:30Z"}
)
RC_POD = pod("bar", owners=RC, nodeName="node")
KUBE_SYSTEM_RC_POD = pod(
    "bar", "kube-system", owners=RC, labels={"k8s-app": "bar"}, nodeName="node"
)
DS_POD = pod("bar", owners=owner("ds", "DaemonSet"), nodeName="node")
CDS_POD = pod(
    "bar",
    owners=owner("ds", "CustomDaemonSet", "crd/v1"),
    annotations={"cluster-autoscaler.kubernetes.io/daemonset-pod": "true"},
    nodeName="node",
)
JOB_POD = pod("bar", owners=owner("job", "Job", "batch/v1"))
SS_POD = pod("bar", owners=owner("ss", "StatefulSet"))
RS_POD = pod("bar", owners=owner("rs", "ReplicaSet"), nodeName="node")
RS_POD_DELETED = pod(
    "bar",
    owners=owner("rs", "ReplicaSet"),
    metadata={"deletionTimestamp": "2020-12-18T16:00:00Z"},
    nodeName="node",
)
EMPTY_DIR_SAFE_LOCAL_VOLUMES_ALL_MATCHING = pod(
    "bar",
    owners=RC,
    annotations={LOCAL_VOLUMES: "scratch-1,scratch-2,scratch-3"},
    nodeName="node",
    volumes=[empty_dir("scratch-1"), empty_dir("scratch-2"), empty_dir("scratch-3")],
)
TERMINAL = pod("bar", nodeName="node", restartPolicy="OnFailure", status={"phase": "Succeeded"})
LONG_TERMINATING = pod(
    "bar",
    owners=RC,
    metadata={"deletionTimestamp": "2020-12-18T16:59:00Z"},
    nodeName="node",
    restartPolicy="OnFailure",
    terminationGracePeriodSeconds=0,
    status={"phase": "Unknown"},
)
LONG_TERMINATING_EXTENDED_GRACE = pod(
    "bar",
    owners=RC,
    metadata={"deletionTimestamp": "2020-12-18T16:57:00Z"},
    nodeName="node",
    restartPolicy="OnFailure",
    terminationGracePeriodSeconds=360,
    status={"phase": "Unknown"},
)
FAILED = pod("bar", nodeName="node", restartPolicy="Never", status={"phase": "Failed"})
EVICTED = pod("bar", nodeName="node", restartPolicy="Always", status={"phase": "Failed"})
SAFE = pod("bar", annotations={SAFE_TO_EVICT: "true"}, nodeName="node")
KUBE_SYSTEM_SAFE = pod("bar", "kube-system", annotations={SAFE_TO_EVICT: "true"}, nodeName="node")
EMPTY_DIR_SAFE = pod(
    "bar", annotations={SAFE_TO_EVICT: "true"}, nodeName="node", volumes=[empty_dir("scratch")]
)
ON_COMPLETION = pod("bar", annotations={SAFE_TO_EVICT: "on-completion"}, nodeName="node")


@dataclass
class Case:
    pods: list[Obj]
    move: list[Obj] = field(default_factory=list)
    ds: list[Obj] = field(default_factory=list)
    blocking: tuple[Obj, str] | None = None  # the pod and upstream's BlockingPodReason


def _xfail(reason: str) -> pytest.MarkDecorator:
    return pytest.mark.xfail(strict=True, reason=reason)


NEEDS_TIME_BSP = _xfail(
    "upstream (system rule) lets a kube-system pod go once it is older than "
    "--blocking-system-pod-distruption-timeout (1h): drasnap has no current time and always "
    "blocks"
)
NEEDS_TIME_TERMINATING = _xfail(
    "upstream (longterminating rule) skips pods deleted longer than their grace period + 30s "
    "ago: drasnap has no current time and moves them"
)
NEEDS_PDB = _xfail(
    "upstream reads PodDisruptionBudgets (pdb rule; a kube-system pod a PDB covers may go): "
    "drasnap reads none"
)
ON_COMPLETION_WAITS = _xfail(
    "upstream (oncompletion rule) waits for a safe-to-evict=on-completion pod (neither moved "
    "nor blocking; the planner delays the node, BlockedByOnCompletionPod): drasnap blocks it "
    "as not replicated"
)

GET_PODS_TO_MOVE = [
    pytest.param(
        Case([UNREPLICATED], blocking=(UNREPLICATED, "NotReplicated")), id="Unreplicated pod"
    ),
    pytest.param(Case([RS_POD], move=[RS_POD]), id="Replicated pod"),
    pytest.param(Case([MANIFEST]), id="Manifest pod"),
    pytest.param(Case([RS_POD, MANIFEST, DS_POD], move=[RS_POD], ds=[DS_POD]), id="DaemonSet pod"),
    pytest.param(Case([SYSTEM], blocking=(SYSTEM, "UnmovableKubeSystemPod")), id="Kube-system"),
    pytest.param(
        Case(
            [NON_DRAINABLE_BLOCKING_SYSTEM],
            blocking=(NON_DRAINABLE_BLOCKING_SYSTEM, "UnmovableKubeSystemPod"),
        ),
        id="Kube-system no pdb system pods blocking",
    ),
    pytest.param(
        Case([DRAINABLE_BLOCKING_SYSTEM], move=[DRAINABLE_BLOCKING_SYSTEM]),
        id="Kube-system no pdb system pods allowing",
        marks=NEEDS_TIME_BSP,
    ),
    pytest.param(
        Case(
            [DRAINABLE_BLOCKING_SYSTEM, NON_DRAINABLE_BLOCKING_SYSTEM],
            move=[DRAINABLE_BLOCKING_SYSTEM],
            blocking=(NON_DRAINABLE_BLOCKING_SYSTEM, "UnmovableKubeSystemPod"),
        ),
        id="Kube-system no pdb system pods blocking (second case)",
        marks=NEEDS_TIME_BSP,
    ),
    pytest.param(
        Case([LOCAL_STORAGE], blocking=(LOCAL_STORAGE, "LocalStorageRequested")), id="Local storage"
    ),
    pytest.param(Case([NON_LOCAL_STORAGE], move=[NON_LOCAL_STORAGE]), id="Non-local storage"),
    pytest.param(
        Case([PDB_POD], blocking=(PDB_POD, "NotEnoughPdb")),
        id="Pdb blocking (restrictivePdb)",
        marks=NEEDS_PDB,
    ),
    pytest.param(Case([PDB_POD], move=[PDB_POD]), id="Pdb allowing (permissivePdb)"),
    pytest.param(
        Case([RS_POD, TERMINATED, TERMINATING], move=[RS_POD, TERMINATING]),
        id="Pod termination",
        marks=NEEDS_TIME_TERMINATING,
    ),
    pytest.param(Case([RC_POD], move=[RC_POD]), id="RC-managed pod"),
    pytest.param(Case([DS_POD], ds=[DS_POD]), id="DS-managed pod"),
    pytest.param(Case([CDS_POD], ds=[CDS_POD]), id="DS-managed pod by a custom Daemonset"),
    pytest.param(Case([JOB_POD], move=[JOB_POD]), id="Job-managed pod"),
    pytest.param(Case([SS_POD], move=[SS_POD]), id="SS-managed pod"),
    pytest.param(Case([RS_POD], move=[RS_POD]), id="RS-managed pod"),
    pytest.param(
        Case([RS_POD_DELETED]),
        id="RS-managed pod that is being deleted",
        marks=NEEDS_TIME_TERMINATING,
    ),
    pytest.param(
        Case(
            [EMPTY_DIR_SAFE_LOCAL_VOLUMES_ALL_MATCHING],
            move=[EMPTY_DIR_SAFE_LOCAL_VOLUMES_ALL_MATCHING],
        ),
        id="pod with EmptyDir and SafeToEvictLocalVolumesKey annotation with matching values",
    ),
    pytest.param(Case([FAILED], move=[FAILED]), id="failed pod"),
    pytest.param(
        Case([LONG_TERMINATING]),
        id="long terminating pod with 0 grace period",
        marks=NEEDS_TIME_TERMINATING,
    ),
    pytest.param(
        Case([LONG_TERMINATING_EXTENDED_GRACE], move=[LONG_TERMINATING_EXTENDED_GRACE]),
        id="long terminating pod with extended grace period",
    ),
    pytest.param(Case([EVICTED], move=[EVICTED]), id="evicted pod"),
    pytest.param(Case([TERMINAL], move=[TERMINAL]), id="pod in terminal state"),
    pytest.param(Case([SAFE], move=[SAFE]), id="pod with PodSafeToEvict annotation"),
    pytest.param(
        Case([KUBE_SYSTEM_SAFE], move=[KUBE_SYSTEM_SAFE]),
        id="kube-system pod with PodSafeToEvict annotation",
    ),
    pytest.param(
        Case([EMPTY_DIR_SAFE], move=[EMPTY_DIR_SAFE]),
        id="pod with EmptyDir and PodSafeToEvict annotation",
    ),
    pytest.param(Case([RC_POD], move=[RC_POD]), id="empty PDB with RC-managed pod"),
    pytest.param(
        Case([KUBE_SYSTEM_RC_POD], move=[KUBE_SYSTEM_RC_POD]),
        id="kube-system PDB with matching kube-system pod",
        marks=NEEDS_PDB,
    ),
    pytest.param(
        Case([KUBE_SYSTEM_RC_POD], blocking=(KUBE_SYSTEM_RC_POD, "UnmovableKubeSystemPod")),
        id="kube-system PDB with non-matching kube-system pod",
    ),
    pytest.param(Case([RC_POD], move=[RC_POD]), id="kube-system PDB with default namespace pod"),
    pytest.param(
        Case([KUBE_SYSTEM_RC_POD], blocking=(KUBE_SYSTEM_RC_POD, "UnmovableKubeSystemPod")),
        id="default namespace PDB with matching labels kube-system pod",
    ),
]


def blocked_as(pod_: Obj, reason: str) -> tuple[str, str]:
    meta = pod_["metadata"]
    return key_of(pod_), MESSAGES[reason].format(namespace=meta["namespace"], name=meta["name"])


def keys(pods: list[Obj]) -> list[str]:
    return sorted(key_of(p) for p in pods)


@pytest.mark.parametrize("case", GET_PODS_TO_MOVE)
def test_get_pods_to_move(case: Case) -> None:
    # TestGetPodsToMove (ElementsMatch: order aside).
    found = drain(case.pods)
    assert keys(found.move) == keys(case.move)
    mirror = [
        p
        for p in case.pods
        if "kubernetes.io/config.mirror" in p["metadata"].get("annotations", {})
    ]
    assert keys(found.stay) == keys([*case.ds, *mirror])
    want = None if case.blocking is None else blocked_as(*case.blocking)
    assert found.blocked == want


@ON_COMPLETION_WAITS
def test_get_pods_to_move_on_completion() -> None:
    # TestGetPodsToMove "pod with safe-to-evict=on-completion annotation": wantOnCompletion,
    # no pod to move and none blocking.
    found = drain([ON_COMPLETION])
    assert found.blocked is None
    assert found.move == []


# -- localstorage/rule_test.go TestDrainable (RC-managed pods: the chain's verdict is the rule's)


def _rc_pod_with(volumes: list[str], annotation: str | None) -> Obj:
    annotations = None if annotation is None else {LOCAL_VOLUMES: annotation}
    return pod(
        "bar",
        owners=RC,
        annotations=annotations,
        nodeName="node",
        volumes=[empty_dir(v) for v in volumes],
    )


SCRATCH_123 = ["scratch-1", "scratch-2", "scratch-3"]


@pytest.mark.parametrize(
    ("volumes", "annotation", "blocks"),
    [
        pytest.param(["scratch"], None, True, id="pod with EmptyDir"),
        pytest.param(
            ["scratch"], "scratch", False, id="... and SafeToEvictLocalVolumesKey annotation"
        ),
        pytest.param(
            ["scratch"], "", True, id="... and empty value for SafeToEvictLocalVolumesKey"
        ),
        pytest.param(["scratch-1"], "scratch-2", True, id="... and non-matching value"),
        pytest.param(
            SCRATCH_123, "scratch-1,scratch-2,scratch-3", False, id="... with matching values"
        ),
        pytest.param(
            SCRATCH_123, "scratch-1,scratch-2,scratch-5", True, id="... with non-matching values"
        ),
        pytest.param(SCRATCH_123, "scratch-1,scratch-2", True, id="... with some matching values"),
        pytest.param(SCRATCH_123, ",", True, id="... annotation empty values"),
    ],
)
def test_local_storage_rule(volumes: list[str], annotation: str | None, blocks: bool) -> None:
    # localstorage TestDrainable ("pod with EmptyDir" and its "... SafeToEvictLocalVolumesKey"
    # variants).
    the_pod = _rc_pod_with(volumes, annotation)
    found = drain([the_pod])
    assert found.blocked == (blocked_as(the_pod, "LocalStorageRequested") if blocks else None)


def test_local_storage_rule_flag_off() -> None:
    # rules.go Default: the localstorage rule is left out without --skip-nodes-with-local-storage.
    the_pod = _rc_pod_with(["scratch"], None)
    assert drain([the_pod], skip_nodes_with_local_storage=False).move == [the_pod]


def test_memory_empty_dir_is_not_local_storage() -> None:
    # utils/drain isLocalVolume: an emptyDir of medium Memory is not local storage.
    the_pod = pod("bar", owners=RC, volumes=[empty_dir("shm", "Memory")])
    assert drain([the_pod]).blocked is None


# -- notsafetoevict/rule_test.go TestDrainable ------------------------------------------------

JOB = owner("job", "Job", "batch/v1")


@pytest.mark.parametrize(
    ("the_pod", "blocks"),
    [
        pytest.param(KUBE_SYSTEM_SAFE, False, id="pod with PodSafeToEvict annotation"),
        pytest.param(RC_POD, False, id="RC-managed pod with no annotation"),
        pytest.param(
            pod("bar", owners=RC, annotations={SAFE_TO_EVICT: "false"}, nodeName="node"),
            True,
            id="RC-managed pod with PodSafeToEvict=false annotation",
        ),
        pytest.param(pod("bar", owners=JOB), False, id="job-managed pod with no annotation"),
        pytest.param(
            pod("bar", owners=JOB, annotations={SAFE_TO_EVICT: "false"}),
            True,
            id="job-managed pod with PodSafeToEvict=false annotation",
        ),
    ],
)
def test_not_safe_to_evict_rule(the_pod: Obj, blocks: bool) -> None:
    found = drain([the_pod])
    assert found.blocked == (blocked_as(the_pod, "NotSafeToEvictAnnotation") if blocks else None)


# -- replicated/rule_test.go TestDrainable ----------------------------------------------------

CUSTOM_CONTROLLER_POD = pod("bar", owners=owner("Foo", "FooController"), nodeName="node")


@pytest.mark.parametrize("skip_custom", [True, False])
@pytest.mark.parametrize(
    ("the_pod", "blocks"),
    [
        pytest.param(RC_POD, False, id="RC-managed pod"),
        pytest.param(pod("bar", owners=JOB, nodeName="node"), False, id="Job-managed pod"),
        pytest.param(
            pod("bar", owners=owner("ss", "StatefulSet"), nodeName="node"),
            False,
            id="SS-managed pod",
        ),
        pytest.param(RS_POD, False, id="RS-managed pod"),
        pytest.param(RS_POD_DELETED, False, id="RS-managed pod that is being deleted"),
        pytest.param(pod("bar", nodeName="node"), True, id="naked pod"),
    ],
)
def test_replicated_rule(the_pod: Obj, blocks: bool, skip_custom: bool) -> None:
    # "<case> with skipNodesWithCustomControllerPods:<true|false>"
    found = drain([the_pod], skip_nodes_with_custom_controller_pods=skip_custom)
    assert found.blocked == (blocked_as(the_pod, "NotReplicated") if blocks else None)


def test_replicated_rule_custom_controller() -> None:
    # "custom-controller-managed non-blocking pod" (flag off) and "... blocking pod" (flag on).
    found = drain([CUSTOM_CONTROLLER_POD], skip_nodes_with_custom_controller_pods=False)
    assert found.blocked is None and found.move == [CUSTOM_CONTROLLER_POD]
    found = drain([CUSTOM_CONTROLLER_POD], skip_nodes_with_custom_controller_pods=True)
    assert found.blocked is not None
    key, message = found.blocked
    assert key == key_of(CUSTOM_CONTROLLER_POD)
    # Upstream's text is "default/bar is not replicated"; drasnap adds the controller's kind.
    assert message.startswith(blocked_as(CUSTOM_CONTROLLER_POD, "NotReplicated")[1])


# -- system/rule_test.go TestDrainable: its cases without time or PDB are TestGetPodsToMove's
# ("Kube-system", "kube-system PDB with non-matching kube-system pod", ...); the flag:


def test_system_rule_flag_off() -> None:
    # rules.go Default: the system rule is left out without --skip-nodes-with-system-pods.
    assert drain([SYSTEM], skip_nodes_with_system_pods=False).move == [SYSTEM]


def test_first_blocking_pod_stops_the_drain() -> None:
    # GetPodsToMove returns at the first BlockDrain, with the pods gathered so far.
    found = drain([RS_POD, UNREPLICATED, JOB_POD])
    assert keys(found.move) == keys([RS_POD])
    assert found.blocked == blocked_as(UNREPLICATED, "NotReplicated")
