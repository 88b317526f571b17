"""The structured-parameters DRA allocator, pure: objects in, allocation results out
(``allocator.allocate`` is the entry point, with Kubernetes' own answers on upstream's cases).

Its parts: ``requests`` (claims checked and planned: requests, subrequests, constraints),
``search`` (the depth-first search and the checks on each device), ``constraints``
(``matchAttribute``, ``distinctAttribute``), ``capacity`` (consumable capacity and request
policies), ``pools`` (slices into pools, the newest generation), ``state`` (the allocated state
an allocation starts from), ``results`` (each claim's ``status.allocation``), ``taint_rules``
(DeviceTaintRules applied to slices), ``fields`` and ``ignored`` (which API fields are
implemented, refused, or ignored under the gates given).

It never imports ``store``, the scheduler's filters or the snapshots.
"""
