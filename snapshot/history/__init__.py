"""What a journal says about a run: allocation events and claim summaries (``allocations``),
the record of a pod a run could not place (``pod_failures``), and both as SQL views
(``views``, the one home of SQL text in the snapshot).

It reads the store's journal; it never imports the DRA or cluster snapshots.
"""
