"""The light list of ``--expander`` names and the expanders' table agree."""

from __future__ import annotations

from drasnap.snapshot.autoscaler.expander_names import EXPANDERS
from drasnap.snapshot.autoscaler.expanders import STRATEGIES


def test_every_name_has_a_strategy_in_the_same_order() -> None:
    assert tuple(STRATEGIES) == EXPANDERS
