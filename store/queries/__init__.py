"""Read-only SQL for people and scripts (``drasnap query``).

``readonly`` runs one statement and holds its guards; ``lexer`` finds names and statement ends
as PostgreSQL's lexer does, and ``refused`` lists the PostgreSQL functions refused by name.
It reads through ``store.sql.engines`` and never imports the store itself (a query opens no
``Store``). Named ``queries``, not ``query``: ``drasnap.store.query`` is the public function.
"""
