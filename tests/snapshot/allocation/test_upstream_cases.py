"""Every allocator case of the corpora in tests/fixtures/allocator-cases, run through `allocate`.

- ``upstream-cases.json``: upstream's test table, the DRA of the first scope (41 cases);
- ``upstream-feature-cases.json``: upstream's cases for the features Kubernetes 1.36 adds
  (72 cases), each with only the gates it names on;
- ``drasnap-cases.json``: cases written for drasnap where those are thin (1.36 defaults all
  on, prioritized lists over partitionable GPUs, taints, shared capacity, each gate off),
  answered by Kubernetes' own allocator (see ``make_drasnap_cases.py`` beside it);

Comparison rules follow the corpus README ("How upstream compares"): devices as a multiset and
node selector terms order-insensitively unless ``exact_order``; ``config: []`` means no config;
consumed capacity compared as quantities, share IDs by presence; error texts by substring.
"""

from __future__ import annotations

import copy
from typing import Any

import pytest

from tests.snapshot.allocation.corpus import check_case, load

CORPORA = {
    "upstream-cases.json": 41,
    "upstream-feature-cases.json": 72,
    "drasnap-cases.json": 39,
}
CASES: list[tuple[str, dict[str, Any]]] = [
    (corpus, case) for corpus in CORPORA for case in load(corpus)
]


@pytest.mark.parametrize(
    ("corpus", "case"),
    CASES,
    ids=[f"{corpus.removesuffix('.json')}:{case['name']}" for corpus, case in CASES],
)
def test_corpus_case(corpus: str, case: dict[str, Any]) -> None:
    inputs = copy.deepcopy(case)
    check_case(case)
    assert case == inputs, "allocate() mutated its inputs"


@pytest.mark.parametrize(("corpus", "count"), CORPORA.items(), ids=list(CORPORA))
def test_corpus_is_present(corpus: str, count: int) -> None:
    """Guards against a table silently shrinking (or skipping) in CI."""
    assert len(load(corpus)) == count
