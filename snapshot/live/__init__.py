"""A live cluster in: its objects captured through the official kubernetes client
(``capture``, ``connect``), written as ``--from`` files (``files``), with names replaced by
stable pseudonyms for sharing (``redact``).

It imports ``ingest`` (the conversions) and the vocabulary below it; it never imports the
snapshots, the simulations or ``store``.
"""
