"""Read-only SQL for people and scripts (``drasnap query``).

``readonly`` runs one statement and holds its guards; ``rows`` hands its rows on as they come,
stops it when asked and at its time limit; ``lexer`` finds names and statement ends as
PostgreSQL's lexer does, and ``refused`` lists the PostgreSQL functions and catalogs refused by
name.
It reads through ``store.sql.engines`` and never imports the store itself (a query opens no
``Store``). Named ``queries``, not ``query``: ``drasnap.store.query`` is the public function.
"""
