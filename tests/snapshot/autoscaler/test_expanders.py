"""The expanders and their chain, on upstream's own test tables (kubernetes/autoscaler a16f0ae8,
``cluster-autoscaler/expander/*/*_test.go``): each test names the upstream test it follows.

Upstream's filters return ``nil`` for no options; drasnap's return ``[]``. Options are told apart
by their group name (upstream's ``Debug`` / ``NodeGroup.Id()``).
"""

from __future__ import annotations

import random
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import pytest
from drasnap.snapshot.autoscaler.expanders import STRATEGIES, Option, Strategy, choose

from tests.snapshot.autoscaler.builders import build_node, build_pod, option


def names(options: Iterable[Option | None] | None) -> list[str]:
    return [o.group if o is not None else "<none>" for o in options or ()]


def keep(
    name: str, options: list[Option], priorities: Mapping[int, Sequence[str]] | None = None
) -> list[str]:
    """One expander's BestOptions (drasnap's strategy ``name``)."""
    return names(STRATEGIES[name](options, random.Random(0), priorities or {}))


# -- chain: factory/chain_test.go TestChainStrategy_BestOption ---------------------------------


def _contains(sub: str) -> Strategy:
    """Upstream's ``substringTestFilterStrategy`` as a filter (BestOptions)."""
    return lambda options, _rng, _prio: [o for o in options if sub in o.group]


def _first_containing(sub: str) -> Strategy:
    """The same as a strategy (BestOption): the first match only."""
    return lambda options, _rng, _prio: [o for o in options if sub in o.group][:1]


@pytest.fixture
def substring_filters(monkeypatch: pytest.MonkeyPatch) -> None:
    for sub in ("a", "b", "x"):
        monkeypatch.setitem(STRATEGIES, f"has-{sub}", _contains(sub))
        monkeypatch.setitem(STRATEGIES, f"first-{sub}", _first_containing(sub))


@pytest.mark.usefixtures("substring_filters")
@pytest.mark.parametrize(
    ("chain", "options", "expected"),
    [
        pytest.param(["first-a"], ["b", "a"], "a", id="selects with no filters"),
        pytest.param(["has-a", "first-b"], ["ab", "b"], "ab", id="filters with one filter"),
        pytest.param(
            ["has-a", "has-b", "first-x"], ["xab", "xa", "x"], "xab", id="filters with multiple"
        ),
        pytest.param(
            ["has-x", "first-a"], ["xc", "xaa", "xab"], "xaa", id="selects from multiple after"
        ),
        pytest.param(["has-a", "has-b", "first-x"], ["a"], "a", id="short circuits"),
    ],
)
def test_chain_as_upstreams_table(chain: list[str], options: list[str], expected: str) -> None:
    # TestChainStrategy_BestOption: the filters, then the fallback strategy (upstream's own
    # fallback is a parameter there; here it is the chain's last name).
    found = choose([option(o) for o in options], chain, random.Random(0))
    assert found is not None and found.group == expected


@pytest.mark.usefixtures("substring_filters")
def test_chain_runs_a_filter_on_a_single_option() -> None:
    # chain.go BestOption runs each filter before looking at the count ("short circuits" returns
    # what the first filter leaves): a lone option the filter drops leaves nothing, and the
    # fallback, given no option, returns none.
    assert choose([option("b")], ["has-a"], random.Random(0)) is None


# -- least-nodes: leastnodes/leastnodes_test.go TestLeastNodes ----------------------------------


@pytest.mark.parametrize(
    ("counts", "expected"),
    [
        pytest.param({}, [], id="no options"),
        pytest.param({"EO0": 0}, [], id="no valid options"),
        pytest.param({"EO0": 2}, ["EO0"], id="1 valid option"),
        pytest.param({"EO0": 2, "EO1": 1}, ["EO1"], id="2 valid options, not equal"),
        pytest.param({"EO0": 6, "EO1": 2, "EO2": 2}, ["EO1", "EO2"], id="3 valid options, 2 equal"),
        pytest.param(
            {"EO0": 8, "EO1": 8, "EO2": 8}, ["EO0", "EO1", "EO2"], id="3 valid options, all equal"
        ),
        pytest.param(
            {"EO0": 23, "EO1": 0, "EO2": 5, "EO3": 8, "EO4": 5, "EO5": 5, "EO6": 22},
            ["EO2", "EO4", "EO5"],
            id="6 valid options, 1 invalid option, 3 equal",
        ),
    ],
)
def test_least_nodes_as_upstreams_table(counts: dict[str, int], expected: list[str]) -> None:
    assert keep("least-nodes", [option(n, c) for n, c in counts.items()]) == expected


def test_least_nodes_chain_drops_an_option_adding_no_node() -> None:
    # TestLeastNodes "no valid options" through the chain (chain.go): the filter leaves nothing,
    # and the random fallback given nothing returns nil.
    assert choose([option("EO0", 0)], ["least-nodes"], random.Random(0)) is None


# -- most-pods: mostpods/mostpods_test.go TestMostPods ------------------------------------------


def test_most_pods_as_upstreams_test() -> None:
    eo0 = option("EO0")
    eo1 = option("EO1", pods=1)
    eo1b = option("EO1b", pods=1)
    assert keep("most-pods", [eo0]) == ["EO0"]
    assert keep("most-pods", [eo0, eo1]) == ["EO1"]
    assert keep("most-pods", [eo0, eo1, eo1b]) == ["EO1", "EO1b"]


def test_most_pods_given_nothing_keeps_nothing() -> None:
    # mostpods.go BestOptions: no option, nil.
    assert keep("most-pods", []) == []


# -- least-waste: waste/waste_test.go TestLeastWaste --------------------------------------------

CPU_PER_POD = 500  # millicores
MEMORY_PER_POD = 1000 * 1024 * 1024  # bytes


def _waste_pod(name: str) -> dict[str, Any]:
    return build_pod(name, CPU_PER_POD, MEMORY_PER_POD)


def test_least_waste_as_upstreams_test() -> None:
    balanced = build_node("balanced", 16 * CPU_PER_POD, 16 * MEMORY_PER_POD)
    highmem = build_node("highmem", 16 * CPU_PER_POD, 32 * MEMORY_PER_POD)
    lowcpu = build_node("lowcpu", 8 * CPU_PER_POD, 16 * MEMORY_PER_POD)
    # Without any pods, one node info.
    assert keep("least-waste", [Option("balanced", 1, [], balanced)]) == ["balanced"]
    # One pod, one node info.
    with_pod = Option("balanced", 1, [_waste_pod("p")], balanced)
    assert keep("least-waste", [with_pod]) == ["balanced"]
    # One pod, two node infos: one with lots of RAM, one with less.
    highmem_option = Option("highmem", 1, [_waste_pod("p")], highmem)
    assert keep("least-waste", [with_pod, highmem_option]) == ["balanced"]
    # One pod, three node infos: one with lots of RAM, one with less, one with less CPU.
    lowcpu_option = Option("lowcpu", 1, [_waste_pod("p")], lowcpu)
    assert keep("least-waste", [with_pod, highmem_option, lowcpu_option]) == ["lowcpu"]


def test_least_waste_keeps_ties() -> None:
    # waste.go BestOptions appends every option of the least score.
    node = build_node("n", 16 * CPU_PER_POD, 16 * MEMORY_PER_POD)
    a = Option("a", 1, [_waste_pod("p")], node)
    b = Option("b", 1, [_waste_pod("q")], node)
    worse = Option("c", 2, [_waste_pod("r")], node)
    assert keep("least-waste", [a, worse, b]) == ["a", "b"]


def test_least_waste_counts_the_pods_full_requests() -> None:
    # waste.go resourcesForPods sums podutils.PodRequests (resourcehelper.PodRequests): an init
    # container larger than the containers sets the pod's request: counted, it turns the choice.
    pod = _waste_pod("p")
    pod["spec"]["initContainers"] = [
        {"name": "init", "image": "pause", "resources": {"requests": {"cpu": "1500m"}}}
    ]
    # Per node, cpu waste + memory waste, with the containers' 500m / with the pod's 1500m:
    small = build_node("small", 1500, 2 * MEMORY_PER_POD)  # 0.667 + 0.5 = 1.167 / 0 + 0.5
    large = build_node("large", 6000, 1 * MEMORY_PER_POD)  # 0.917 + 0 = 0.917 / 0.75 + 0
    options = [Option("large", 1, [pod], large), Option("small", 1, [pod], small)]
    assert keep("least-waste", options) == ["small"]


def test_least_waste_given_nothing_keeps_nothing() -> None:
    assert keep("least-waste", []) == []


# -- priority: priority/priority_test.go ---------------------------------------------------------

CONFIG = {5: [r".*t2\.micro.*"], 10: [r".*t2\.large.*", r".*t3\.large.*"], 50: [r".*m4\.4xlarge.*"]}
ONE_ENTRY = {10: [r".*t2\.large.*"]}
WILDCARD = {5: [".*"], 10: [r".t2\.large.*"]}

T2_MICRO = option("my-asg.t2.micro")
T2_LARGE = option("my-asg.t2.large")
T3_LARGE = option("my-asg.t3.large")
M4_4XLARGE = option("my-asg.m4.4xlarge")


@pytest.mark.parametrize(
    ("config", "options", "expected"),
    [
        pytest.param(
            CONFIG, [T2_LARGE], [T2_LARGE], id="CorrecltyFiltersSingleMatchingOptionOutOfOne"
        ),
        pytest.param(
            CONFIG,
            [T2_LARGE, M4_4XLARGE],
            [M4_4XLARGE],
            id="CorrecltyFiltersSingleMatchingOptionOutOfMany",
        ),
        pytest.param(WILDCARD, [T2_LARGE, T2_MICRO], [T2_LARGE], id="FiltersToHigherPriorityMatch"),
        pytest.param(
            CONFIG,
            [T2_LARGE, T3_LARGE, T2_MICRO],
            [T2_LARGE, T3_LARGE],
            id="CorrecltyFiltersTwoMatchingOptionsOutOfMany",
        ),
        pytest.param(
            CONFIG,
            [T2_LARGE, T3_LARGE],
            [T2_LARGE, T3_LARGE],
            id="CorrecltyFallsBackToAllWhenNoMatches",
        ),
        # CorrecltyHandlesConfigUpdate: the one-entry config, then the full one.
        pytest.param(
            ONE_ENTRY, [T2_LARGE, T3_LARGE, M4_4XLARGE], [T2_LARGE], id="HandlesConfigUpdate-before"
        ),
        pytest.param(
            CONFIG, [T2_LARGE, T3_LARGE, M4_4XLARGE], [M4_4XLARGE], id="HandlesConfigUpdate-after"
        ),
        # CorrecltySkipsBadChangeConfig: an empty configuration filters nothing.
        pytest.param(
            {},
            [T2_LARGE, T3_LARGE, M4_4XLARGE],
            [T2_LARGE, T3_LARGE, M4_4XLARGE],
            id="SkipsBadChangeConfig",
        ),
    ],
)
def test_priority_as_upstreams_tests(
    config: dict[int, list[str]], options: list[Option], expected: list[Option]
) -> None:
    # TestPriorityExpander<id>
    assert keep("priority", options, config) == names(expected)


def test_priority_given_nothing_keeps_nothing() -> None:
    # priority.go BestOptions: no option, nil.
    assert keep("priority", [], CONFIG) == []


# -- random: random/random_test.go TestRandomExpander -------------------------------------------


def test_random_as_upstreams_test() -> None:
    eo1a, eo1b = option("EO1a"), option("EO1b")
    assert names([choose([eo1a], ["random"], random.Random(0))]) == ["EO1a"]
    picked = choose([eo1a, eo1b], ["random"], random.Random(0))
    assert picked is not None and picked.group in {"EO1a", "EO1b"}
    assert choose([], ["random"], random.Random(0)) is None


def test_random_is_the_seeds() -> None:
    # Upstream draws from Go's global rand; drasnap from the run's seed: the same seed, the same
    # pick, and every option is picked by some seed.
    options = [option(f"g{i}") for i in range(4)]
    picks = [choose(options, ["random"], random.Random(seed)) for seed in range(40)]
    again = [choose(options, ["random"], random.Random(seed)) for seed in range(40)]
    assert names(picks) == names(again)
    assert set(names(picks)) == {o.group for o in options}


def test_ties_left_by_the_chain_are_drawn_among_the_tied() -> None:
    # expander_factory.go Build: the chain's fallback is random.NewStrategy(), over what the
    # filters left. most-pods leaves b and c; a never comes up.
    options = [option("a", pods=1), option("b", pods=2), option("c", pods=2)]
    picks = set(names(choose(options, ["most-pods"], random.Random(seed)) for seed in range(40)))
    assert picks == {"b", "c"}
    first = [choose(options, ["most-pods"], random.Random(7)) for _ in range(3)]
    assert len({o.group for o in first if o is not None}) == 1


def test_chain_stops_at_the_first_expander_leaving_one() -> None:
    # chain.go: least-nodes leaves one option, so most-pods (which would pick b) never runs.
    options = [option("a", node_count=1, pods=1), option("b", node_count=2, pods=5)]
    found = choose(options, ["least-nodes", "most-pods"], random.Random(0))
    assert found is not None and found.group == "a"
    found = choose(options, ["most-pods", "least-nodes"], random.Random(0))
    assert found is not None and found.group == "b"
