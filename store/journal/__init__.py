"""Reading a store's journal back: records and fates, replay, the state at a seq, and diffs.

``reader`` reads the journal (``records`` holds its answers and the fate walk, without SQL);
``replayer`` re-applies records to a store, which ``playback`` (replay and verify, the stored
state against the replay's: ``stored_state``) and ``states`` (the state at a seq, diffs;
``jsondiff`` compares two values) drive. The digest
chain a replay checks lives beside the store (``store.chain``): the write-behind and
``store.sql.persist`` use it too. Nothing under ``store.sql`` or ``store.behind`` ever imports
this package: reading the journal back stands on the store, never the other way round.
"""
