"""``drasnap report``: one self-contained HTML page per run, built from the store's public
readers (the run record, the journal's layers and allocation history, the pod failures, the
cluster snapshot's nodes, pods and devices).

``data`` gathers what the page shows (:class:`data.RunReport`, plain values, aggregated for
runs too large to read node by node); ``charts`` draws its charts with matplotlib as inline
SVG (the page needs no script to show them and makes no network request); ``page`` writes
the HTML of a run; ``sweep_page`` the page of a sweep (its points' ``compare_rows`` in one
table, a chart per axis that differs), with the same style, table and chart code.
It reads the store only (read-only, never writing a run) and never imports ``drasnap.tools``;
matplotlib is imported when a chart is drawn. Public names: ``__init__.pyi``.
"""

import lazy_loader

__getattr__, __dir__, __all__ = lazy_loader.attach_stub(__name__, __file__)
