"""The workload of a timeline (``drasnap simulate timeline --trace``): what arrives and leaves
when, read from a file and checked before the run starts (``docs/timelines.md`` 2.10).

:mod:`.events` holds what every reader produces (:class:`Trace`, :class:`TraceEvent`);
:mod:`.jsonl` reads drasnap's own JSON Lines format; :mod:`.generator` makes Poisson arrivals
from a SPEC (``--trace gen:SPEC``); :mod:`.alibaba` reads Alibaba's GPU trace v2023
(``docs/traces.md``); :mod:`.recorded` turns a recording of ``drasnap record`` into a trace
(``--trace-from-db``).
"""

from drasnap.snapshot.simulation.traces.alibaba import AlibabaGroup, AlibabaTrace, read_alibaba
from drasnap.snapshot.simulation.traces.events import (
    CREATE,
    DELETE,
    OPS,
    TRACE_KINDS,
    Trace,
    TraceEvent,
)
from drasnap.snapshot.simulation.traces.generator import generate
from drasnap.snapshot.simulation.traces.jsonl import read_jsonl

__all__ = [
    "CREATE",
    "DELETE",
    "OPS",
    "TRACE_KINDS",
    "AlibabaGroup",
    "AlibabaTrace",
    "Trace",
    "TraceEvent",
    "generate",
    "read_alibaba",
    "read_jsonl",
]
