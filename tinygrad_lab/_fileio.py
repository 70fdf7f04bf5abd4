"""Writing a file so that no reader ever sees half of it: the one mechanism behind every file the
package writes (checkpoints, ONNX models, benchmark results, course files).

The data goes to a temporary file in the same folder, is flushed to disk, then renamed over the
path (a rename within a folder is atomic). A failure leaves the old file as it was and no
temporary behind. A writer killed mid-write (SIGKILL, a power cut) cannot clean up: its temporary
carries its process id, and the next write to the same path removes it once that process is gone.
"""
from __future__ import annotations

import contextlib
import os
import re
import secrets
import stat
from typing import BinaryIO, Iterator


@contextlib.contextmanager
def atomic_open(path: str | os.PathLike) -> Iterator[BinaryIO]:
    """A binary file object whose contents replace `path` when the block ends without an error.
    A new file gets the umask's permissions, as open() gives; an overwritten one keeps its own."""
    path = os.fspath(path)
    directory, name = os.path.split(os.path.abspath(path))
    _remove_stale_temporaries(directory, name)
    tmp = os.path.join(directory, f".{name}.{os.getpid()}.{secrets.token_hex(6)}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0), 0o666)
    try:
        with os.fdopen(fd, "wb") as f:
            yield f
            f.flush()
            os.fsync(f.fileno())
        with contextlib.suppress(OSError):
            os.chmod(tmp, stat.S_IMODE(os.stat(path).st_mode))  # overwriting keeps the old permissions
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    _fsync_dir(directory)


def write_atomic(path: str | os.PathLike, data: bytes) -> None:
    """Write `data` to `path` through atomic_open."""
    with atomic_open(path) as f:
        f.write(data)


def _fsync_dir(directory: str) -> None:
    """Make the rename itself durable (POSIX; a no-op where a folder cannot be opened)."""
    if os.name != "posix":
        return
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def _process_is_gone(pid: int) -> bool:
    """True when no process `pid` runs on this machine (POSIX: signal 0 probes without signalling)."""
    if os.name != "posix":
        return True  # Windows: an open file cannot be unlinked, so a write in progress keeps its temporary
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    except OSError:
        return False  # it exists (e.g. another user's process)
    return False


def _remove_stale_temporaries(directory: str, name: str) -> None:
    """Delete the temporaries that earlier writes to `name` left behind when their process was killed."""
    pattern = re.compile(rf"\.{re.escape(name)}\.([0-9]{{1,10}})\.[0-9a-f]{{12}}\.tmp")
    try:
        entries = os.listdir(directory)
    except OSError:
        return
    for entry in entries:
        match = pattern.fullmatch(entry)
        if match is None or int(match[1]) == os.getpid() or not _process_is_gone(int(match[1])):
            continue
        with contextlib.suppress(OSError):  # gone already (another write cleaned it), or still open (Windows)
            os.unlink(os.path.join(directory, entry))
