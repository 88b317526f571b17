"""``drasnap query`` ends when asked: rows stream (memory stays flat on an endless statement),
Ctrl-C and SIGTERM stop it within a second, ``--timeout`` stops it, a SIGKILLed client leaves
no PostgreSQL backend running, and the catalogs that hold secrets are refused by name.

The signal tests run the real entry point in a subprocess, as a user's shell would."""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from drasnap.store import QueryRows, QueryStoppedError, QueryTimeoutError, ReadOnlyError, query_rows
from drasnap.store.queries import readonly
from drasnap.store.queries.readonly import query, run_read_only
from drasnap.store.sql import engines
from drasnap.tools.output import TableStream

from tests.conftest import Database
from tests.store.journal_session import Session
from tests.tools.journal_cli import run
from tests.tools.journal_cli import session as session  # the fixture

ROOT = Path(__file__).resolve().parents[2]
ENV = {**os.environ, "PYTHONPATH": str(ROOT)}
# The statement: x counts 1, 2, 3, ... without end.
ENDLESS = "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT x FROM c"
# The same, counted: SQLite or PostgreSQL computes its one row forever, sending nothing.
ENDLESS_COUNT = (
    "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT count(*) FROM c"
)
TIMEOUT_LINE = re.compile(
    r"Error: the query ran longer than --timeout 2 s and was stopped after (\d+) rows printed; "
    r"give a larger --timeout, or --timeout 0 for no limit\n"
)
# Runs the command given after the file name and writes its peak resident memory (KiB) there.
PEAK_MEMORY = (
    "import resource, subprocess, sys; code = subprocess.call(sys.argv[2:]); "
    "open(sys.argv[1], 'w').write(str(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)); "
    "sys.exit(code)"
)


def drasnap(*args: str | Path) -> list[str]:
    return [sys.executable, "-m", "drasnap.tools", *(str(a) for a in args)]


def digest(path: Path | str) -> str:
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def wait_for(condition: Callable[[], bool], what: str, seconds: float = 60.0) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, f"waited {seconds} s for {what}"
        time.sleep(0.05)


def has_open(pid: int, path: Path | str) -> bool:
    """Whether process ``pid`` holds ``path`` open (the query has connected)."""
    try:
        fds = list(Path(f"/proc/{pid}/fd").iterdir())
    except OSError:
        return False
    for fd in fds:
        try:
            if os.readlink(fd) == str(Path(path).resolve()):
                return True
        except OSError:
            continue
    return False


@contextlib.contextmanager
def popen(command: list[str]) -> Iterator[subprocess.Popen[str]]:
    """``command`` running with its output piped; killed if still running when the block ends
    (a failed test leaves no endless query behind), its pipes closed."""
    with subprocess.Popen(
        command, cwd=ROOT, env=ENV, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    ) as process:
        try:
            yield process
        finally:
            if process.poll() is None:
                process.kill()


def stop_with(process: subprocess.Popen[str], number: int) -> tuple[str, str, float]:
    """Send signal ``number``; stdout, stderr and the seconds until the process ended."""
    sent = time.monotonic()
    process.send_signal(number)
    out, err = process.communicate(timeout=30)
    return out, err, time.monotonic() - sent


# -- SQLite: always -----------------------------------------------------------------------------


def test_an_endless_query_streams_in_flat_memory_until_its_timeout(
    session: Session, tmp_path: Path
) -> None:
    # The statement grew by ~90 MB/s before it printed anything; now its rows come at
    # once, the process stays the size of a one-row query, and --timeout 2 ends it.
    def peak(sql: str, *options: str) -> tuple[subprocess.CompletedProcess[str], int, str]:
        memory, out = tmp_path / "peak", tmp_path / "out"
        with out.open("w") as stdout:
            done = subprocess.run(
                [
                    sys.executable,
                    "-c",
                    PEAK_MEMORY,
                    str(memory),
                    *drasnap("query", session.path, sql, "--csv", *options),
                ],
                cwd=ROOT,
                env=ENV,
                stdout=stdout,
                stderr=subprocess.PIPE,
                text=True,
                timeout=120,
            )
        return done, int(memory.read_text()), out.read_text()

    one, one_peak, one_out = peak("SELECT 1 AS x")
    assert (one.returncode, one_out) == (0, "x\n1\n")
    endless, endless_peak, out = peak(ENDLESS, "--timeout", "2")
    assert endless.returncode == 1
    match = TIMEOUT_LINE.fullmatch(endless.stderr)
    assert match, endless.stderr
    printed = int(match.group(1))
    assert printed >= 1000  # several batches, printed while the statement ran
    # every row printed, in order, and no more: x, then 1, 2, ..., printed
    assert out == "x\n" + "".join(f"{i}\n" for i in range(1, printed + 1))
    assert endless_peak - one_peak < 40_000, (one_peak, endless_peak)  # KiB


@pytest.mark.parametrize("number", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_a_signal_stops_a_query_computing_a_row_within_a_second(
    session: Session, number: int
) -> None:
    # SQLite computes the count's one row forever: no Python code runs there but the progress
    # handler, where the signal's handler interrupts it.
    before = digest(session.path)
    with popen(drasnap("query", session.path, ENDLESS_COUNT)) as process:
        wait_for(lambda: has_open(process.pid, session.path), "the query to open the database")
        time.sleep(0.5)  # (connected, the statement sent: SQLite is counting)
        out, err, took = stop_with(process, number)
    name = signal.Signals(number).name
    assert (process.returncode, out, err) == (
        128 + number,
        "",
        f"{name}: the query was stopped after 0 rows printed\n",
    )
    assert took < 1.5
    assert digest(session.path) == before


def test_a_signal_stops_a_query_whose_reader_stopped_reading(session: Session) -> None:
    # The rows fill the pipe and the writer blocks; SIGINT ends it there (a handler that only
    # asked the database to stop would go back to the blocked write).
    with popen(drasnap("query", session.path, ENDLESS, "--csv")) as process:
        assert process.stdout is not None
        # (os.read: what the file object would read ahead, communicate() would not see)
        assert os.read(process.stdout.fileno(), 2) == b"x\n"
        time.sleep(1.0)  # (the pipe fills up)
        out, err, took = stop_with(process, signal.SIGINT)
    assert process.returncode == 130
    match = re.fullmatch(r"SIGINT: the query was stopped after (\d+) rows printed\n", err)
    assert match, err
    printed = int(match.group(1))
    assert printed > 0
    assert out.splitlines()[:printed] == [str(i) for i in range(1, printed + 1)]
    assert took < 1.5


def test_a_reader_that_leaves_ends_the_query_quietly(session: Session) -> None:
    # drasnap query ... | head: the pipe closes, the query ends, nothing is said (SIGPIPE's
    # status, as a program killed by it would have).
    with popen(drasnap("query", session.path, ENDLESS, "--csv")) as process:
        assert process.stdout is not None and process.stderr is not None
        assert process.stdout.readline() == "x\n"
        process.stdout.close()
        assert process.wait(timeout=30) == 128 + signal.SIGPIPE
        assert process.stderr.read() == ""


def test_the_store_stops_and_times_out_by_itself(session: Session) -> None:
    with pytest.raises(QueryTimeoutError, match=r"time limit of 0\.5 s .* after 0 rows") as exc:
        query(session.path, ENDLESS_COUNT, timeout=0.5)
    assert exc.value.seconds == 0.5
    seen: list[tuple[object, ...]] = []

    def read_three_then_stop(rows: QueryRows) -> None:
        for row in rows:
            seen.append(row)
            if len(seen) == 3:
                rows.stop()

    with (
        query_rows(session.path, ENDLESS) as rows,
        pytest.raises(QueryStoppedError, match="was stopped after 3 rows"),
    ):
        read_three_then_stop(rows)
    assert seen == [(1,), (2,), (3,)]  # (nothing buffered is handed on after the stop)
    # a limit ends an endless statement too, and --timeout 0 is no limit
    assert query(session.path, ENDLESS, max_rows=4).rows == [(1,), (2,), (3,), (4,)]
    assert run("query", session.path, "SELECT 7 AS x", "--timeout", "0", "--csv").stdout == "x\n7\n"


def test_streamed_output_is_what_one_document_would_be(session: Session) -> None:
    sql = "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 2500) " + (
        "SELECT x, 'r' || x AS r FROM c"
    )
    rows = [{"x": i, "r": f"r{i}"} for i in range(1, 2501)]  # three batches of 1,000 rows
    as_json = run("query", session.path, sql, "--json")
    assert as_json.stdout == json.dumps(rows, indent=2) + "\n"
    as_csv = run("query", session.path, sql, "--csv")
    assert as_csv.stdout == "x,r\n" + "".join(f"{i},r{i}\n" for i in range(1, 2501))
    empty = "SELECT 1 AS a, 2 AS b WHERE 0"
    assert run("query", session.path, empty, "--json").stdout == "[]\n"
    assert run("query", session.path, empty, "--csv").stdout == "a,b\n"
    table = run("query", session.path, empty)
    assert (table.stdout, table.stderr) == ("a  b\n-  -\n", "(0 rows)\n")


def test_a_streamed_table_keeps_its_first_widths_and_widens_later() -> None:
    table = TableStream(["a", "b"])
    assert table.lines([(1, "x"), (22, "y")]) == ["a   b", "--  -", "1   x", "22  y"]
    assert table.lines([(333, "z")]) == ["333  z"]  # wider from here on
    assert table.lines([(4, "w")]) == ["4    w"]  # (never narrower again)


# -- PostgreSQL ---------------------------------------------------------------------------------

# Refused by name before anything connects: nothing listens on port 1.
CLOSED = "postgresql+psycopg://nobody@127.0.0.1:1/nothing"
SECRETS = {
    "pg_authid": ("SELECT rolname, rolpassword FROM pg_authid", "pg_authid"),
    "qualified-quoted": ('SELECT * FROM pg_catalog . "pg_shadow"', "pg_shadow"),
    "table": ("TABLE pg_user_mapping", "pg_user_mapping"),
    "view": ("SELECT umoptions FROM pg_user_mappings", "pg_user_mappings"),
    "in-a-cte": (
        "WITH s AS (SELECT subconninfo FROM pg_subscription) SELECT * FROM s",
        "pg_subscription",
    ),
}


def needs_psycopg() -> None:
    """A PostgreSQL URL is checked for its driver first (without it: ``MissingDriverError``,
    also one line); the checks of the statement come next, before anything connects."""
    pytest.importorskip("psycopg", reason="the postgres extra (psycopg) is not installed")


@pytest.mark.parametrize(("sql", "name"), SECRETS.values(), ids=SECRETS.keys())
def test_the_catalogs_of_secrets_are_refused_by_name(sql: str, name: str) -> None:
    needs_psycopg()
    with pytest.raises(ReadOnlyError, match=f"^drasnap query does not read {name}: it holds"):
        query(CLOSED, sql)


def test_a_table_named_in_a_string_is_refused() -> None:
    needs_psycopg()
    # table_to_xml('pg_authid', ...) would read the catalog with its name out of the check's
    # sight (in a string)
    with pytest.raises(ReadOnlyError, match=r"table_to_xml is refused \(it reads the tables named"):
        query(CLOSED, "SELECT table_to_xml('pg_authid', true, false, '')")
    with pytest.raises(ReadOnlyError, match=r"database_to_xml is refused"):
        query(CLOSED, "SELECT database_to_xml(true, false, '')")


@pytest.mark.postgres
def test_the_reader_role_alone_would_read_pg_authid(postgres_url: str) -> None:
    # Why the names are refused: the role pg_read_all_data reads pg_authid (without the
    # checks, the server answers), and through the CLI it is one line, nothing read.
    ((count,),) = run_read_only(
        engines.parse_target(postgres_url), "SELECT count(*) FROM pg_authid"
    ).rows
    assert count >= 1
    result = run("query", postgres_url, "SELECT rolpassword FROM pg_authid")
    assert (result.exit_code, result.stdout) == (1, "")
    assert result.stderr == (
        "Error: drasnap query does not read pg_authid: it holds the roles' password hashes; "
        "read pg_roles instead\n"
    )


@pytest.mark.postgres
def test_the_query_session_carries_the_servers_own_timeouts(postgres_url: str) -> None:
    sql = (
        "SELECT current_setting('statement_timeout') AS s, "
        "current_setting('idle_in_transaction_session_timeout') AS i"
    )
    given = run("query", postgres_url, sql, "--timeout", "7", "--csv")
    assert given.stdout == "s,i\n7s,1min\n"
    default = run("query", postgres_url, sql, "--csv")
    assert default.stdout == "s,i\n5min,1min\n"  # --timeout's default, 300 s
    none = run("query", postgres_url, sql, "--timeout", "0", "--csv")
    assert none.stdout == "s,i\n0,1min\n"  # (0: no limit)


@pytest.mark.postgres
def test_an_endless_query_ends_at_its_timeout_on_postgresql(postgres_url: str) -> None:
    done = subprocess.run(
        drasnap("query", postgres_url, ENDLESS, "--csv", "--timeout", "2"),
        cwd=ROOT,
        env=ENV,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 1
    match = TIMEOUT_LINE.fullmatch(done.stderr)
    assert match, done.stderr
    printed = int(match.group(1))
    assert printed >= 1000
    assert done.stdout == "x\n" + "".join(f"{i}\n" for i in range(1, printed + 1))


def backends_running(database: Database, tag: str) -> list[int]:
    """The backends running a statement that holds ``tag`` (not this one)."""
    rows = database.sql(
        "SELECT pid FROM pg_stat_activity WHERE state = 'active' "
        "AND query LIKE :tag AND pid <> pg_backend_pid()",
        tag=f"%{tag}%",
    )
    return [int(pid) for (pid,) in rows]


def start_counting(
    url: str, tag: str, *options: str
) -> contextlib.AbstractContextManager[subprocess.Popen[str]]:
    """``drasnap query`` counting the endless statement (marked with ``tag``) on ``url``."""
    return popen(drasnap("query", url, f"{ENDLESS_COUNT} /* {tag} */", *options))


@pytest.mark.postgres
@pytest.mark.parametrize("number", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_a_signal_cancels_the_backend(postgres_url: str, number: int) -> None:
    database = Database("postgres", postgres_url, postgres_url)
    tag = f"drasnap-stop-{os.getpid()}-{number}"
    with start_counting(postgres_url, tag) as process:
        wait_for(lambda: bool(backends_running(database, tag)), "the backend to run the query")
        out, err, took = stop_with(process, number)
    name = signal.Signals(number).name
    assert (process.returncode, out, err) == (
        128 + number,
        "",
        f"{name}: the query was stopped after 0 rows printed\n",
    )
    assert took < 1.5
    wait_for(lambda: not backends_running(database, tag), "the backend to stop", seconds=2.0)


@pytest.mark.postgres
def test_a_sigkilled_query_leaves_no_backend_running(postgres_url: str) -> None:
    # Nothing runs in drasnap to cancel: the server's settings end the statement. With
    # client_connection_check_interval (PostgreSQL 14 on) within seconds, else at the
    # statement_timeout (--timeout 10).
    database = Database("postgres", postgres_url, postgres_url)
    ((version,),) = database.sql("SELECT current_setting('server_version_num')::int")
    tag = f"drasnap-kill-{os.getpid()}"
    with start_counting(postgres_url, tag, "--timeout", "10") as process:
        wait_for(lambda: bool(backends_running(database, tag)), "the backend to run the query")
        process.kill()
        process.wait(timeout=30)
    killed = time.monotonic()
    wait_for(lambda: not backends_running(database, tag), "the backend to stop", seconds=15)
    assert time.monotonic() - killed < (5.0 if version >= 140000 else 12.0)


@pytest.mark.postgres
def test_postgresql_streams_a_limit_and_names_the_columns_of_no_rows(postgres_url: str) -> None:
    # --limit ends an endless statement (its backend is cancelled), and a statement that
    # returns no row still prints its columns (psycopg's stream keeps no description then).
    limited = run("query", postgres_url, ENDLESS, "--limit", "3", "--csv")
    assert limited.stdout == "x\n1\n2\n3\n"
    empty = "SELECT 1 AS a, 'x' AS b WHERE false"
    assert run("query", postgres_url, empty, "--csv").stdout == "a,b\n"
    assert run("query", postgres_url, empty, "--json").stdout == "[]\n"
    table = run("query", postgres_url, empty)
    assert (table.stdout, table.stderr) == ("a  b\n-  -\n", "(0 rows)\n")
    shown = run("query", postgres_url, "SHOW statement_timeout", "--timeout", "2", "--csv")
    assert shown.stdout == "statement_timeout\n2s\n"


@pytest.mark.postgres
def test_the_server_ends_a_session_left_idle_and_the_answer_stands(
    postgres_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A reader that holds the last rows (stopped with SIGSTOP, or printing into a pipe nobody
    # reads) leaves the transaction idle: the server ends the session at
    # idle_in_transaction_session_timeout (here 1 s instead of a minute), and the rows read
    # stand.
    monkeypatch.setattr(readonly, "PG_IDLE_TIMEOUT", "1s")
    database = Database("postgres", postgres_url, postgres_url)
    with query_rows(postgres_url, "SELECT pg_backend_pid() AS pid") as rows:
        ((pid,),) = list(rows)
        wait_for(
            lambda: not database.sql("SELECT FROM pg_stat_activity WHERE pid = :p", p=pid),
            "the server to end the idle session",
            seconds=10,
        )
    assert rows.columns == ("pid",)
