"""The parts of the DRA allocator (`snapshot.allocator.allocate` is the entry point).

- `snapshot.allocation.requests`: claims checked and planned (requests, subrequests,
  constraints);
- `snapshot.allocation.search`: the depth-first search and the checks on each device;
- `snapshot.allocation.constraints`: ``matchAttribute`` and ``distinctAttribute``;
- `snapshot.allocation.capacity`: consumable capacity and request policies;
- `snapshot.allocation.state`: the allocated state an allocation starts from;
- `snapshot.allocation.results`: the ``status.allocation`` of each claim;
- `snapshot.allocation.fields`: which API fields are implemented, and which are refused;
- `snapshot.allocation.ignored`: which fields Kubernetes ignores under the gates given.
"""
