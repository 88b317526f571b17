"""Run a cluster-autoscaler differential case (tests/fixtures/autoscale-cases,
tests/fixtures/autoscale-random) through ``drasnap simulate autoscale`` and compare its
decisions with the real cluster-autoscaler's, aspect by aspect (the fixtures' README).

``python -m tests.snapshot.simulation.ca_cases`` prints the agreement per aspect over every
committed case (and the cases that disagree).
"""

from __future__ import annotations

import gzip
import json
import sys
import tempfile
from collections import Counter
from pathlib import Path
from typing import Any

import orjson
from drasnap.snapshot.cluster.snapshot import ClusterSnapshot
from drasnap.snapshot.simulation.autoscale_config import files_digest
from drasnap.snapshot.simulation.inputs import source_digest
from drasnap.snapshot.simulation.runner import prepare, simulate
from drasnap.snapshot.simulation.settings import Settings
from drasnap.store import MemoryStore

from tests.paths import FIXTURES

GIVEN = FIXTURES / "autoscale-cases"
RANDOM = FIXTURES / "autoscale-random" / "cases.jsonl.gz"
ASPECTS = ("scale-up", "triggered", "pending", "removed")


def given_cases() -> list[dict[str, Any]]:
    """The 16 cases given with the oracle (case.json and expect.json of each directory)."""
    found = []
    for directory in sorted(p for p in GIVEN.iterdir() if p.is_dir()):
        case = json.loads((directory / "case.json").read_text())
        expect = json.loads((directory / "expect.json").read_text())
        found.append({"case": case, **{k: expect[k] for k in ("deterministic", "outcomes")}})
    return found


def random_cases() -> list[dict[str, Any]]:
    """The generated cases with CA's outcomes (generate.py, run_oracle.py)."""
    with gzip.open(RANDOM, "rb") as lines:
        return [orjson.loads(line) for line in lines if line.strip()]


def case_inputs(case: dict[str, Any], directory: Path) -> tuple[Path, Path]:
    """``case``'s cluster folder (``--from``) and node-groups file, written under ``directory``."""
    source = directory / "cluster"
    source.mkdir(parents=True)
    items = [
        *case["deviceClasses"],
        *case["claimTemplates"],
        *case["claims"],
        *case["nodes"],
        *case["slices"],
        *case["pods"],
    ]
    (source / "cluster.json").write_bytes(
        orjson.dumps({"apiVersion": "v1", "kind": "List", "items": items})
    )
    groups = directory / "node-groups.yaml"
    entries = [
        {
            "name": g["name"],
            "minSize": g["minSize"],
            "maxSize": g["maxSize"],
            "node": g["template"],
            "slices": g["templateSlices"],
        }
        for g in case["groups"]
    ]
    groups.write_bytes(orjson.dumps({"nodeGroups": entries}))
    return source, groups


def run_drasnap(case: dict[str, Any], **options: Any) -> dict[str, Any]:
    """drasnap's decisions on ``case`` (``simulate autoscale --json``'s result)."""
    with tempfile.TemporaryDirectory() as tmp:
        source, groups = case_inputs(case, Path(tmp))
        digest = files_digest(source_digest(source), str(groups))
        settings = Settings(
            "autoscale",
            source=str(source),
            source_digest=digest,
            node_groups_file=str(groups),
            expander=case["expander"],
            scale_down_utilization_threshold=case["threshold"],
            **options,
        ).resolved()
        outcome = simulate(ClusterSnapshot(MemoryStore()), settings, lambda: prepare(settings))
    return {**outcome.result, "unschedulable": outcome.result["unschedulable"]}


def _pod_classes(case: dict[str, Any]) -> dict[str, bytes]:
    """Each pod's class of identical pods: namespace, owner, labels and spec."""
    classes = {}
    for pod in case["pods"]:
        meta = pod["metadata"]
        ns = meta.get("namespace") or "default"
        owners = [(o.get("kind"), o.get("name")) for o in meta.get("ownerReferences") or ()]
        spec = {k: v for k, v in pod["spec"].items() if k != "nodeName"}
        classes[f"{ns}/{meta['name']}"] = orjson.dumps(
            [ns, owners, meta.get("labels"), spec], option=orjson.OPT_SORT_KEYS
        )
    return classes


def aspects(
    case: dict[str, Any], ours: dict[str, Any], theirs: dict[str, Any], from_events: bool
) -> dict[str, bool]:
    """Whether drasnap's decisions ``ours`` agree with one CA outcome ``theirs``, per aspect.
    ``from_events``: ``stillPending`` lists the pods with a NotTriggerScaleUp event (the
    generated cases), not the pods CA's log says it left pending (the 16 given ones)."""
    classes = _pod_classes(case)

    def counted(pods: Any) -> Counter[bytes]:
        return Counter(classes[p] for p in pods)

    added = {g: n for g, n in ours["added"].items() if n}
    # CA records NotTriggerScaleUp only in a loop that does not scale up
    # (processors/status/eventing_scale_up_processor.go): then the pods left pending are
    # among those it lists as pending without an event, with the ones it packed on existing
    # nodes and the ones it ignores (expendable).
    if from_events and theirs["scaleUp"]:
        left = [*ours["placed_on_existing"], *ours["unschedulable"], *ours.get("ignored", ())]
        pending = counted(left) == counted(theirs["placedOnExisting"])
    else:
        pending = counted(ours["unschedulable"]) == counted(theirs["stillPending"])
    return {
        "scale-up": added == theirs["scaleUp"],
        "triggered": counted(ours["placed_on_new"]) == counted(theirs["triggered"]),
        "pending": pending,
        "removed": sorted(ours["removed"]) == sorted(theirs["markedToBeDeleted"]),
    }


def agreement(entry: dict[str, Any], ours: dict[str, Any]) -> dict[str, bool]:
    """Per aspect: whether drasnap's decision is one of CA's outcomes on that aspect."""
    from_events = entry.get("stillPendingFrom") == "events"
    found = [aspects(entry["case"], ours, o, from_events) for o in entry["outcomes"]]
    return {a: any(f[a] for f in found) for a in ASPECTS}


def main() -> None:
    entries = given_cases() + (random_cases() if RANDOM.exists() else [])
    totals: Counter[str] = Counter()
    for entry in entries:
        try:
            ours = run_drasnap(entry["case"])
        except Exception as exc:  # a report over many cases goes on
            print(entry["case"]["name"], "error:", exc)
            continue
        agreed = agreement(entry, ours)
        totals.update(a for a, ok in agreed.items() if ok)
        whole = all(agreed.values())
        totals["all"] += whole
        if not whole:
            wrong = [a for a, ok in agreed.items() if not ok]
            print(entry["case"]["name"], "det" if entry["deterministic"] else "nondet", wrong)
    n = len(entries)
    print(" ".join(f"{a} {totals[a]}/{n}" for a in (*ASPECTS, "all")), file=sys.stderr)


if __name__ == "__main__":
    main()
