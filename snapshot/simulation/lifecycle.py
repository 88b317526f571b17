"""Starting, continuing and reporting a run in a database: what ``drasnap simulate`` decides
around the loop, so the command line only parses options and prints.

A run is a named store of the database (:mod:`snapshot.simulation.runs`). :class:`RunSession`
chooses it (a fresh ``<scenario>-<n>``, the one named, or with ``resume`` and no name the newest
unfinished one), builds and checks the starting cluster *before* the database is touched when
the run starts here (a mistake in the input leaves nothing behind), opens the store for writing
(another process taking the fresh name at the same moment moves this run to the next one),
then runs, continues or reports it. Closing keeps the last safe point: the state at a step
boundary when the run returned or was stopped by a signal, else the last checkpoint.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from pathlib import Path
from types import TracebackType
from typing import Any

from drasnap.snapshot.cluster.snapshot import ClusterSnapshot
from drasnap.snapshot.errors import RunInterrupted, ScenarioError
from drasnap.snapshot.simulation import collector
from drasnap.snapshot.simulation.inputs import StartingObjects
from drasnap.snapshot.simulation.plan import SIM_KIND
from drasnap.snapshot.simulation.record import Outcome
from drasnap.snapshot.simulation.runner import prepare, simulate
from drasnap.snapshot.simulation.runs import RunStatus, find_run, fresh_name, newest_unfinished
from drasnap.snapshot.simulation.settings import ProgressCallback, Settings, StopRequest
from drasnap.store import Store, StoreLockedError

__all__ = ["RunSession"]

#: A SQLite database with drasnap's schema in it is many pages long; a file of one page or less
#: holds no schema (its creation failed, and was rolled back), so nothing can be in it.
_EMPTY_DATABASE_BYTES = 4096

_NAME_ATTEMPTS = 50  # fresh names tried when other processes take them at the same moment


class RunSession:
    """One run of ``settings`` in ``db``, opened for writing (a context manager).

    ``name`` None starts a new run under a fresh name, unless ``resume``: then the newest
    unfinished run is continued (:attr:`chose_unfinished` says so). ``note`` receives the notes
    reading the input gave (kinds skipped, ...), once. ``write_behind`` is the store's
    (``"auto"``: a writer process of its own on a SQLite file; False for small runs, which the
    process's start would cost more than it saves).

    Raises (on entering):
        ScenarioError: nothing to resume, no free name, or the input does not suit the run.
        snapshot.ObjectValidationError: a manifest fails validation.
        store.StoreLockedError: another process writes the named run.
    """

    def __init__(
        self,
        db: str,
        settings: Settings,
        *,
        name: str | None = None,
        resume: bool = False,
        strict: bool = False,
        checkpoint_every: float = 2.0,
        write_behind: bool | str = "auto",
        note: Callable[[str], None] = lambda _text: None,
    ) -> None:
        self.db = db
        self.settings = settings
        self.resume = resume
        self._strict = strict
        self._every = checkpoint_every
        self._write_behind = write_behind
        self._note = note
        self._built: StartingObjects | None = None
        self._saved = False
        self.chose_unfinished = False
        self.fresh = name is None and not resume
        if name is None and resume:
            unfinished = newest_unfinished(db)
            if unfinished is None:
                raise ScenarioError(
                    f"nothing to resume: {db} holds no unfinished run (give --name to start or "
                    "continue a named run; drasnap runs lists them)"
                )
            name = unfinished.name
            self.chose_unfinished = True
        if self.fresh:
            self._start()
            name = fresh_name(db, settings.scenario)
        else:
            assert name is not None
            existing = find_run(db, name)
            if existing is None or existing.status == RunStatus.EMPTY:
                self._start()
        self.name: str = name
        self._store: Store | None = None

    def _start(self) -> StartingObjects:
        """The starting cluster, built and checked once (before the database is opened)."""
        if self._built is None:
            with collector.paced():  # 10^5 objects made, all kept: nothing for it to find
                self._built = prepare(self.settings, strict=self._strict)
            for text in self._built.notes:
                self._note(text)
        return self._built

    def _hand_over(self) -> StartingObjects:
        """The starting cluster, for the run to load; this session keeps no reference to it, so
        what the loaded snapshot does not share of it is freed once loaded."""
        built = self._start()
        self._built = None
        return built

    def __enter__(self) -> RunSession:
        created = _new_file(self.db)
        try:
            self._store = self._open()
        except Exception:
            if created is not None:
                _remove_if_unused(created)
            raise
        self.name = self._store.name
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if self._store is not None:
            # Midway through a step the state is between two safe points: keep the last one.
            self._store.close(checkpoint=self._saved)

    def run(
        self,
        *,
        report: ProgressCallback | None = None,
        stop: StopRequest = lambda: None,
        options: dict[str, Any] | None = None,
    ) -> Outcome:
        """Start, continue or report the run (:func:`snapshot.simulation.runner.simulate`).

        Raises what ``simulate`` raises; after a ``RunInterrupted`` the state is saved.
        """
        assert self._store is not None, "enter the session first"
        cluster = ClusterSnapshot(self._store, features=self.settings.feature_gates)
        where = f"run {self.name!r} in {self.db}"
        try:
            outcome = simulate(
                cluster,
                self.settings,
                self._hand_over,
                resume=self.resume,
                where=where,
                report=report or (lambda _done, _total, _detail: None),
                stop=stop,
                options=options,
            )
        except RunInterrupted:
            self._saved = True
            raise
        self._saved = True
        return outcome

    def keep(self, kind: str, key: str, make: Callable[[ClusterSnapshot], Any]) -> Any:
        """After :meth:`run` finished the run: the value under ``kind``/``key`` of its store,
        made from the final cluster by ``make`` and kept (at depth 0, checkpointed on closing)
        if the store does not hold it yet."""
        assert self._store is not None and self._saved, "run the session first"
        value = self._store.get(kind, key)
        if value is None:
            value = make(ClusterSnapshot(self._store, features=self.settings.feature_gates))
            self._store.put(kind, key, value)
        return value

    def _open(self) -> Store:
        """The run's store, open for writing; a fresh name taken meanwhile moves on."""
        name = self.name
        for _ in range(_NAME_ATTEMPTS):
            try:
                # The journal and checkpoints are written by a process of their own on a SQLite
                # file (store.behind.writer): the simulation does not wait for them.
                store = Store.open(
                    self.db,
                    name=name,
                    auto_checkpoint=False,
                    checkpoint_interval=self._every,
                    write_behind=self._write_behind,
                )
            except StoreLockedError:
                if not self.fresh:
                    raise
            else:
                if not self.fresh or store.count(SIM_KIND) == 0:
                    return store
                store.close()
            name = fresh_name(self.db, self.settings.scenario)
        raise ScenarioError(f"could not find a free run name in {self.db}; give --name")


def _new_file(db: str) -> Path | None:
    """``db`` as a file path when no file is there yet (the store open creates it)."""
    if "://" in db:
        return None
    path = Path(db).expanduser()
    return None if path.exists() else path


def _remove_if_unused(path: Path) -> None:
    """Remove the database file an open that failed created (a full disk: a 0-byte file or a
    page with no schema), and SQLite's files beside it. A file that may hold more stays: one
    longer than a page, or with a write-ahead log that is not empty (another process creating
    the schema meanwhile: the last connection to close removes the log)."""
    wal = path.with_name(path.name + "-wal")
    try:
        if path.stat().st_size > _EMPTY_DATABASE_BYTES:
            return
        if wal.exists() and wal.stat().st_size > 0:
            return
    except OSError:
        return
    for suffix in ("", "-wal", "-shm", "-journal"):
        with contextlib.suppress(OSError):
            path.with_name(path.name + suffix).unlink(missing_ok=True)
