"""A live cluster in: its objects captured through the official kubernetes client
(``capture``, ``connect``), its watch events recorded into a store given to it (``record``),
objects written as ``--from`` files (``files``), names replaced by stable pseudonyms for
sharing (``redact``).

It imports ``ingest`` (the conversions) and the vocabulary below it; it never imports the
snapshots or the simulations, and uses a store only through the object it is given.
"""
