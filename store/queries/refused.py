"""The functions ``drasnap query`` refuses by name, and why.

A READ ONLY transaction stops writes to tables, but not what a function does outside them:
read a file of the server's machine, signal another session, reload the configuration, open a
connection of its own (``dblink``). Those are refused before the query is sent, by name,
wherever the name appears as code (not in a string literal or a comment), quoted or not,
schema-qualified or not: ``pg_catalog . "pg_read_file" /* x */ (...)`` is found as
``pg_read_file``. (``store.queries.lexer`` finds the names as the server's lexer would.)

The PostgreSQL list follows the chapter "System Administration Functions" of the PostgreSQL
manual (generic file access, server signaling, backup and recovery control, replication,
advisory locks, statistics resets), the large-object functions that write (PostgreSQL before
16 takes them in a READ ONLY transaction: ``be-fsstubs.c`` gained its read-only checks in 16),
``set_config``, ``pg_notify``, ``dblink`` and the functions that run SQL given as a string
(``query_to_xml``, ``ts_stat``...), whose text no check before the server can see into.

The catalogs that hold secrets (``pg_authid``, ``pg_shadow``, ``pg_user_mapping(s)``,
``pg_subscription``) are refused by name too (:func:`pg_secret`), and so are the functions that
read a table named in a string (``table_to_xml('pg_authid', ...)``), which would hide the name.

A function defined in the database that calls one of these is not seen here; the server's own
rules still hold there: the READ ONLY transaction, the rollback that ends every query, and the
role ``pg_read_all_data`` the query runs as where the connecting role may take it (which may
not read server files or signal other sessions). See ``store.queries.readonly``.
"""

from __future__ import annotations

from drasnap.store.queries.lexer import Token

__all__ = ["pg_refused", "pg_secret", "sqlite_refused"]

# (why, names, name prefixes)
_PG: tuple[tuple[str, frozenset[str], tuple[str, ...]], ...] = (
    (
        "it reads or writes files of the database server's machine",
        frozenset({
            "pg_read_file", "pg_read_file_old", "pg_read_binary_file", "pg_stat_file",
            "lo_import", "lo_export", "pg_current_logfile", "pg_hba_file_rules",
            "pg_ident_file_mappings", "pg_file_settings", "pg_show_all_file_settings",
            # adminpack
            "pg_file_write", "pg_file_rename", "pg_file_unlink", "pg_file_sync",
            "pg_logdir_ls",
        }),
        ("pg_ls_",),  # pg_ls_dir, pg_ls_logdir, pg_ls_waldir, pg_ls_tmpdir, ...
    ),
    (
        "it writes a large object, which PostgreSQL before 16 allows in a read-only "
        "transaction",
        frozenset({
            "lo_create", "lo_creat", "lo_from_bytea", "lo_put", "lo_unlink", "lowrite",
            "lo_truncate", "lo_truncate64",
        }),
        (),
    ),
    (
        "it acts on other sessions",
        frozenset({
            "pg_terminate_backend", "pg_cancel_backend", "pg_log_backend_memory_contexts",
            "pg_notify", "pg_export_snapshot",
        }),
        (),
    ),
    (
        "it takes or releases an advisory lock, the lock drasnap's writers hold",
        frozenset(),
        ("pg_advisory_", "pg_try_advisory_"),
    ),
    (
        "it connects to a database outside the read-only transaction",
        frozenset(),
        ("dblink",),
    ),
    ("it changes a setting (even the role the query runs as)", frozenset({"set_config"}), ()),
    (
        "it changes the state of the server",
        frozenset({
            "pg_reload_conf", "pg_rotate_logfile", "pg_rotate_logfile_old", "pg_switch_wal",
            "pg_backup_start", "pg_backup_stop", "pg_start_backup", "pg_stop_backup",
            "pg_promote", "pg_wal_replay_pause", "pg_wal_replay_resume",
            "pg_stat_statements_reset", "pg_copy_physical_replication_slot",
            "pg_copy_logical_replication_slot", "pg_drop_replication_slot",
            "pg_replication_slot_advance", "pg_logical_slot_get_changes",
            "pg_logical_slot_get_binary_changes", "pg_logical_emit_message",
            "pg_log_standby_snapshot", "pg_sync_replication_slots",
            "pg_import_system_collations", "brin_summarize_new_values", "brin_summarize_range",
            "brin_desummarize_range", "gin_clean_pending_list", "pg_nextoid",
            "pg_stop_making_pinned_objects", "pg_extension_config_dump",
        }),
        # pg_create_restore_point and the slots; replication origins; statistics resets
        ("pg_create_", "pg_replication_origin_", "pg_stat_reset", "binary_upgrade_"),
    ),
    (
        "it runs SQL given as a string, which drasnap cannot check",
        frozenset({
            "query_to_xml", "query_to_xmlschema", "query_to_xml_and_xmlschema",
            "cursor_to_xml", "cursor_to_xmlschema", "ts_stat", "ts_rewrite",
        }),
        (),
    ),
    (
        # table_to_xml('pg_authid', ...) reads a catalog of secrets the name check below
        # cannot see (the name is a string).
        "it reads the tables named in a string, which drasnap cannot check",
        frozenset(),
        ("table_to_xml", "schema_to_xml", "database_to_xml"),
    ),
)  # fmt: skip

# The catalogs that hold secrets, refused by name wherever they are named as code. The role
# pg_read_all_data, which a query takes where it may, reads them all (PostgreSQL 15:
# "SELECT rolpassword FROM pg_authid" answers it), so the role cannot be what keeps them.
_PG_SECRETS = {
    "pg_authid": "it holds the roles' password hashes; read pg_roles instead",
    "pg_shadow": "it holds the roles' password hashes; read pg_roles instead",
    "pg_user_mapping": "it holds the user names and passwords of foreign servers",
    "pg_user_mappings": "it holds the user names and passwords of foreign servers",
    "pg_subscription": (
        "it holds the subscriptions' connection strings, with their passwords; read "
        "pg_stat_subscription instead"
    ),
}

_SQLITE = {
    "load_extension": "it loads a library into the database engine",
    "fts3_tokenizer": "it registers tokenizer code with the database engine",
    # (the sqlite3 shell's file functions, should an extension provide them)
    "readfile": "it reads or writes files",
    "writefile": "it reads or writes files",
    "edit": "it starts an editor",
}


def _why(name: str) -> str | None:
    for why, names, prefixes in _PG:
        if name in names or name.startswith(prefixes):
            return why
    return None


def pg_refused(tokens: list[Token]) -> tuple[str, str] | None:
    """The first refused name among ``tokens`` (unquoted and quoted names) and why, or None."""
    for token in tokens:
        if token.kind in ("word", "name"):
            name = token.text.lower()
            why = _why(name)
            if why is not None:
                return name, why
    return None


def pg_secret(tokens: list[Token]) -> tuple[str, str] | None:
    """The first catalog of secrets named among ``tokens`` (``pg_authid``, ``pg_shadow``...)
    and why it is refused, or None."""
    for token in tokens:
        if token.kind in ("word", "name"):
            name = token.text.lower()
            if name in _PG_SECRETS:
                return name, _PG_SECRETS[name]
    return None


def sqlite_refused(function: str) -> str | None:
    """Why the SQLite function ``function`` is refused, or None."""
    return _SQLITE.get(function.lower())
