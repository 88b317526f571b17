"""`Requests.fits_on` and `Requests.shortfalls`: one rule, upstream's ``fitsRequest``.

``fits_on`` answers pods that ask only cpu and memory with ``room_on`` (the pod slot, cpu and
memory), without building ``shortfalls``' list; these cases keep the three one rule
(hand-derived: a node of 1000m cpu, 100 bytes, 3 pods).
"""

from __future__ import annotations

import itertools

import pytest
from drasnap.snapshot.scheduling import Requests

HAVE = Requests(cpu=1000, memory=100, pods=3)


@pytest.mark.parametrize(
    ("want", "used", "short"),
    [
        # exactly full after the pod: fits
        (Requests(cpu=500, memory=50), Requests(cpu=500, memory=50, pods=2), ()),
        (Requests(cpu=501, memory=50), Requests(cpu=500, memory=50, pods=2), ("cpu",)),
        (Requests(cpu=500, memory=51), Requests(cpu=500, memory=50, pods=2), ("memory",)),
        # the pod slot is counted whatever the pod asks
        (Requests(), Requests(pods=3), ("pods",)),
        (
            Requests(cpu=1, memory=1),
            Requests(cpu=1000, memory=100, pods=3),
            ("pods", "cpu", "memory"),
        ),
        # a resource asked at 0 is not checked, even on an over-committed node
        (Requests(memory=10), Requests(cpu=1500, memory=0, pods=1), ()),
        (Requests(cpu=10), Requests(cpu=0, memory=150, pods=1), ()),
        # ephemeral storage and scalars take the long path: same answers for cpu and memory
        (
            Requests(cpu=501, ephemeral_storage=1),
            Requests(cpu=500, pods=1),
            ("cpu", "ephemeral-storage"),
        ),
        (
            Requests(cpu=500, scalars={"example.com/gpu": 1}),
            Requests(cpu=500, pods=1),
            ("example.com/gpu",),
        ),
    ],
)
def test_fits_on_is_no_shortfall(want: Requests, used: Requests, short: tuple[str, ...]) -> None:
    assert want.shortfalls(HAVE, used) == short
    assert want.fits_on(HAVE, used) is (not short)
    room_short = {"pods", "cpu", "memory"} & set(short)  # what room_on checks
    assert want.room_on(HAVE, used) is (not room_short)


def test_fits_on_agrees_with_shortfalls_on_every_small_case() -> None:
    amounts = (0, 1, 2, 3)
    have = Requests(cpu=2, memory=2, pods=2)
    for cpu, memory, used_cpu, used_memory, used_pods in itertools.product(amounts, repeat=5):
        want = Requests(cpu=cpu, memory=memory)
        used = Requests(cpu=used_cpu, memory=used_memory, pods=used_pods)
        assert want.fits_on(have, used) is (not want.shortfalls(have, used)), (want, used)
        assert want.room_on(have, used) is want.fits_on(have, used), (want, used)
