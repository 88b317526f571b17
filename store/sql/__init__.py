"""The store in SQL: engines, the schema, the writer lock, and reading and writing the rows.

``engines`` creates every engine and translates every driver error; ``tables`` mirrors the
head migration; ``opening`` connects a store (lock, schema, views, load), which ``lock``,
``disk`` and ``disk_faults`` (a full, read-only or failing disk, told as such) serve;
``persist`` reads and writes layers, entries and journal rows; ``catalog`` lists the stores of a
database; ``view_registry`` (no SQL library) and ``views`` keep the views the
layers above register, and ``as_of`` rewrites a query to a journal seq. It never imports
``store.journal``, ``store.behind`` or ``store.queries``: they stand on it.
"""
