"""drasnap's autoscale against the real cluster-autoscaler's decisions (one RunOnce of
kubernetes/autoscaler a16f0ae8, ``ca-oracle``): the 16 cases given with the oracle
(tests/fixtures/autoscale-cases) and the generated corpus (tests/fixtures/autoscale-random),
each aspect compared as ca_cases.py says. Every disagreement is in KNOWN with its reason: a
case that starts to agree, or one that stops, fails the test until the table says so.
"""

from __future__ import annotations

from typing import Any

import pytest

from tests.snapshot.simulation.ca_cases import (
    ASPECTS,
    agreement,
    given_cases,
    random_cases,
    run_drasnap,
)

# CA is not deterministic on most generated inputs (its pod and node order come from Go map
# iteration: the informers' listers, ClusterSnapshot.ListNodeInfos; sort.Slice keeps no order
# among equal priorities); drasnap takes one order (by name), an order CA can take, but 8 runs
# of CA did not show the outcome it gives.
ORDER_REMOVED = (
    "which unneeded nodes the budgets keep (--max-drain-parallelism 1) and which are empty "
    "follow CA's random candidate and pod order: drasnap's name order gives a set none of "
    "CA's 8 runs gave"
)
ORDER_PACKED = (
    "which pending pods CA packs on existing nodes (round robin from a random node order) "
    "changes which pods are left for new nodes: drasnap's count differs from CA's 8 runs"
)
ORDER_GROUP = (
    "the pods left after packing differ (CA's random order), so the options the expander "
    "compares differ and another group (or size) is chosen than in CA's 8 runs"
)

#: case -> (aspects where drasnap's decision is none of CA's outcomes, why)
KNOWN: dict[str, tuple[tuple[str, ...], str]] = {
    "r1000-a": (("removed",), ORDER_REMOVED),
    "r1005-f": (("removed",), ORDER_REMOVED),
    "r1033-f": (("triggered", "pending"), ORDER_PACKED),
    "r1049-a": (("scale-up", "triggered", "pending"), ORDER_GROUP),
    "r1054-f": (("pending",), ORDER_PACKED),
    "r1063-a": (("scale-up", "triggered", "pending"), ORDER_GROUP),
    "r1065-c": (("triggered", "pending"), ORDER_PACKED),
    "r1075-f": (("scale-up", "triggered", "pending", "removed"), ORDER_GROUP),
    "r1096-f": (("removed",), ORDER_REMOVED),
    "r1099-b": (("triggered", "pending"), ORDER_PACKED),
    "r1138-f": (("scale-up", "triggered", "pending"), ORDER_GROUP),
    "r1146-g": (("scale-up", "triggered", "pending"), ORDER_GROUP),
    "r1152-f": (("removed",), ORDER_REMOVED),
    "r1153-g": (("triggered", "pending"), ORDER_PACKED),
    "r1158-e": (("removed",), ORDER_REMOVED),
    "r1161-a": (("removed",), ORDER_REMOVED),
    "r1169-b": (("triggered", "pending"), ORDER_PACKED),
    "r1172-e": (("removed",), ORDER_REMOVED),
    "r1179-e": (("pending",), ORDER_PACKED),
    "r1186-e": (("triggered", "pending"), ORDER_PACKED),
    "r1190-b": (("triggered", "pending"), ORDER_PACKED),
    "r1213-d": (("removed",), ORDER_REMOVED),
    "r1224-a": (("triggered", "pending"), ORDER_PACKED),
    "r1225-b": (("triggered", "pending"), ORDER_PACKED),
    "r1237-g": (("triggered", "pending"), ORDER_PACKED),
    "r1242-e": (("triggered", "pending"), ORDER_PACKED),
    "r1243-f": (("triggered", "pending"), ORDER_PACKED),
    "r1246-b": (("triggered", "pending"), ORDER_PACKED),
    "r1253-b": (("triggered", "pending"), ORDER_PACKED),
    "r1256-e": (("triggered", "pending"), ORDER_PACKED),
    "r1270-e": (("scale-up", "triggered", "pending"), ORDER_GROUP),
    "r1285-f": (("removed",), ORDER_REMOVED),
    "r1292-f": (("triggered", "pending"), ORDER_PACKED),
    "r1328-g": (("triggered", "pending"), ORDER_PACKED),
    "r1329-a": (("scale-up", "triggered", "pending"), ORDER_GROUP),
}


def _disagreements(entries: list[dict[str, Any]]) -> dict[str, tuple[str, ...]]:
    found = {}
    for entry in entries:
        agreed = agreement(entry, run_drasnap(entry["case"]))
        wrong = tuple(a for a in ASPECTS if not agreed[a])
        if wrong:
            found[entry["case"]["name"]] = wrong
    return found


def test_the_given_cases_agree_but_the_known_differences() -> None:
    entries = given_cases()
    assert len(entries) == 16
    known = {n: a for n, (a, _why) in KNOWN.items() if n.startswith("s0")}
    assert _disagreements(entries) == known


@pytest.mark.slow
def test_the_generated_corpus_agrees_but_the_known_differences() -> None:
    entries = random_cases()
    assert len(entries) >= 300
    known = {n: a for n, (a, _why) in KNOWN.items() if not n.startswith("s0")}
    # every deterministic case agrees: the differences are CA's random order
    deterministic = {e["case"]["name"] for e in entries if e["deterministic"]}
    assert not deterministic & set(known)
    assert _disagreements(entries) == known
