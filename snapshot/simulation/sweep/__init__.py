"""What-if sweeps: many autoscale runs of one cluster, each with other node groups, workloads,
expander, scale-down threshold or feature gates, and one table comparing them; or many
timelines (``scenario: timeline``), each with other timeline settings too.

Each point is one ``autoscale`` (or ``timeline``) run named ``<sweep>-<index>`` (index from
0, stable for a given file), its settings recorded (the sweep, index and variants among them), so
``drasnap runs`` lists it and ``--resume`` semantics hold: a point is started, continued from
its last checkpoint, or (finished) reported, never run twice to its end; the store's writer
lock keeps two workers off one point.

The modules, each importing only those before it:

- ``file``: the sweep file (its format is there), read and checked into a :class:`Sweep`
  whose points are :class:`Point` settings;
- ``views``: where a finished point keeps its summary, and the SQL view ``sweep_results``
  over them, registered with the store when the simulation is imported
  (``simulation/__init__.py``);
- ``points``: running one point and keeping its summary, and running a sweep's points;
- ``compare``: the comparison rows of finished runs, for ``drasnap compare`` and the report;
- ``job``: a sweep as a Kubernetes Indexed Job, one point per completion index.

Like the rest of the simulation it never imports ``drasnap.tools``. Its errors are
``SweepFileError`` (the file) and ``ArgumentError`` (an index outside the points), both in
``snapshot.errors``. Public names: ``__init__.pyi``, loaded when first used (so that
registering the view imports no run machinery).
"""

import lazy_loader

__getattr__, __dir__, __all__ = lazy_loader.attach_stub(__name__, __file__)
