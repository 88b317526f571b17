"""Framed messages over a pipe: an 8-byte length, then a pickle (the store and its write-behind
process, :mod:`store.behind.writer` and :mod:`store.behind.writer_process`, are the same program:
pickle is their own format, never read from anywhere else)."""

from __future__ import annotations

import os
import pickle
import struct
from typing import Any

__all__ = ["frame", "receive", "send", "write_all"]

_HEADER = struct.Struct("<Q")
_READ = 1 << 20


def frame(message: Any) -> bytes:
    data = pickle.dumps(message, protocol=pickle.HIGHEST_PROTOCOL)
    return _HEADER.pack(len(data)) + data


def send(fd: int, message: Any) -> None:
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
