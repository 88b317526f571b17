"""The messages between a store and its write-behind process, and how they cross the pipe.

The store (:mod:`store.behind.writer`) asks with :class:`Rows`, :class:`WriteCheckpoint`,
:class:`TellDigest` and :class:`Close`; the process (:mod:`store.behind.writer_process`) answers
a checkpoint with :class:`store.rows.Flushed` (what a flush on the store's own connection
answers too), :class:`CheckpointFailed` or :class:`DiskFault` (also sent unasked, when a batch
of rows meets a disk fault), a digest with :class:`StateDigest`, the close with :class:`Closed`,
and anything it cannot go on from with :class:`Fatal`.

Each message is framed: an 8-byte length, then a pickle (the store and its write-behind process
are the same program: pickle is their own format, never read from anywhere else). It never
imports the store or either side of the pipe.
"""

from __future__ import annotations

import os
import pickle
import struct
from typing import Any, NamedTuple

from drasnap.store.rows import EntryTuple, Flushed

__all__ = [
    "Answer",
    "CheckpointFailed",
    "Close",
    "Closed",
    "DiskFault",
    "Fatal",
    "Flushed",
    "Request",
    "Rows",
    "StateDigest",
    "TellDigest",
    "WriteCheckpoint",
    "frame",
    "receive",
    "send",
    "write_all",
]

# -- the store asks ----------------------------------------------------------------------------


class Rows(NamedTuple):
    """A batch of the store's journal buffer, in order (:class:`store.rows.Entry` as tuples)."""

    rows: list[EntryTuple]


class WriteCheckpoint(NamedTuple):
    """Write a checkpoint of every row sent so far, stamped ``at`` (answered later)."""

    at: float
    next_layer: int


class TellDigest(NamedTuple):
    """Answer the state digest of every row sent so far (:class:`StateDigest`)."""


class Close(NamedTuple):
    """Commit nothing more (an open transaction is rolled back), answer :class:`Closed`, end."""


Request = Rows | WriteCheckpoint | TellDigest | Close

# -- the process answers (a checkpoint: Flushed, CheckpointFailed or DiskFault) ---------------


class CheckpointFailed(NamedTuple):
    """The checkpoint was rolled back: the next one writes everything again."""

    reason: str


class DiskFault(NamedTuple):
    """The disk is full, read-only or failing (``store.sql.disk_faults``): where, why, what the
    database keeps, and for a full disk the free space and the bytes owed (the store stops at
    once). ``answers_checkpoint``: False when a batch of rows, not a checkpoint, met it."""

    message: str
    answers_checkpoint: bool


class StateDigest(NamedTuple):
    digest: str


class Closed(NamedTuple):
    """The process is ending: nothing more will be committed."""


class Fatal(NamedTuple):
    """The process cannot go on (it could not open the store, or a bug): it ends."""

    reason: str


Answer = Flushed | CheckpointFailed | DiskFault | StateDigest | Closed | Fatal

# -- framing -----------------------------------------------------------------------------------

_HEADER = struct.Struct("<Q")
_READ = 1 << 20


def frame(message: Request | Answer) -> bytes:
    data = pickle.dumps(message, protocol=pickle.HIGHEST_PROTOCOL)
    return _HEADER.pack(len(data)) + data


def send(fd: int, message: Request | Answer) -> None:
    """Write one framed message (blocking)."""
    write_all(fd, frame(message))


def write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def _read_exactly(fd: int, n: int) -> bytes | None:
    parts = []
    while n:
        chunk = os.read(fd, min(n, _READ))
        if not chunk:
            return None
        parts.append(chunk)
        n -= len(chunk)
    return b"".join(parts)


def receive(fd: int) -> Any:
    """Read one framed message (blocking); None at the end of the input."""
    header = _read_exactly(fd, _HEADER.size)
    if header is None:
        return None
    data = _read_exactly(fd, _HEADER.unpack(header)[0])
    return None if data is None else pickle.loads(data)
