"""The structured-parameters DRA allocator, pure: objects in, allocation results out
(``allocator.allocate`` is the entry point, with Kubernetes' own answers on upstream's cases).

Its parts: ``requests`` (claims checked and planned: requests, subrequests, constraints),
``search`` (the depth-first search and the checks on each device), ``constraints``
(``matchAttribute``, ``distinctAttribute``), ``capacity`` (consumable capacity and request
policies), ``pools`` (slices into pools, the newest generation), ``state`` (the allocated state
an allocation starts from), ``results`` (each claim's ``status.allocation``), ``taint_rules``
(DeviceTaintRules applied to slices), ``fields`` and ``ignored`` (which API fields are
implemented, refused, or ignored under the gates given), ``explain`` (why a node's devices do or
do not take the claims, device by device, with the allocator's own verdict).

It never imports ``store``, the scheduler's filters or the snapshots.
"""
