"""Small I/O helpers: the one file writer (atomic, umask-honouring, one-line
errors) and JSON that is always valid."""

from __future__ import annotations

import io
import json
import math
import os
import tempfile

import numpy as np

from ntkgap.errors import UsageError


def jsonable(obj):
    """Convert numpy scalars/arrays and non-finite floats (to None); a typed
    result (anything with ``as_dict()``, as :mod:`ntkgap.results`) as its dict."""
    if callable(getattr(obj, "as_dict", None)):
        return jsonable(obj.as_dict())
    if isinstance(obj, dict):
        return {str(k): jsonable(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [jsonable(v) for v in obj]
    if isinstance(obj, np.ndarray):
        return jsonable(obj.tolist())
    if isinstance(obj, (np.integer,)):
        return int(obj)
    if isinstance(obj, (float, np.floating)):
        f = float(obj)
        return f if math.isfinite(f) else None
    if isinstance(obj, np.bool_):
        return bool(obj)
    return obj


def dumps(obj, **kw) -> str:
    return json.dumps(jsonable(obj), allow_nan=False, **kw)


def _umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def _cannot(path, exc: OSError) -> UsageError:
    reason = exc.strerror or type(exc).__name__
    return UsageError(f"cannot write {path}: {reason}")


def check_writable(path: str) -> None:
    """Raise the one-line UsageError unless ``path`` could be written: its
    folder exists, is a folder, and this process may create files in it.
    Commands call this before their work, so a bad path costs nothing."""
    path = os.fspath(path)
    folder = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(folder):
        up = _existing_above(folder)
        if not os.path.isdir(up):
            raise UsageError(f"cannot write {path}: {up} is a file, not a folder")
        raise UsageError(f"cannot write {path}: folder {folder} does not exist")
    if os.path.isdir(path):
        raise UsageError(f"cannot write {path}: it is a folder")
    if not os.access(folder, os.W_OK | os.X_OK):
        raise UsageError(f"cannot write {path}: folder {folder} is not writable")


def _existing_above(path: str) -> str:
    """The nearest existing path at or above ``path`` (a file or a folder)."""
    up = os.path.abspath(path)
    while not os.path.exists(up) and os.path.dirname(up) != up:
        up = os.path.dirname(up)
    return up


def ensure_folder(folder: str) -> str:
    """Create ``folder`` if it is missing and its parent exists (never a
    chain of folders the user did not ask for). Returns ``folder``."""
    folder = os.fspath(folder)
    if os.path.isdir(folder):
        return folder
    parent = os.path.dirname(os.path.abspath(folder))
    if not os.path.isdir(parent):
        up = _existing_above(parent)
        if not os.path.isdir(up):
            raise UsageError(f"cannot create folder {folder}: {up} is a file, not a folder")
        raise UsageError(f"cannot create folder {folder}: {parent} does not exist")
    try:
        os.mkdir(folder)
    except FileExistsError:
        if not os.path.isdir(folder):
            raise UsageError(f"cannot create folder {folder}: a file has that name") from None
    except OSError as exc:
        raise UsageError(f"cannot create folder {folder}: {exc.strerror}") from None
    return folder


def atomic_write(path: str, data: bytes | str) -> None:
    """Write ``data`` to ``path``: the one way ntkgap writes a file.

    A temporary file in the same folder is written, fsynced, given the mode
    a plain ``open`` would give (0666 less the umask) and renamed over
    ``path``: readers see the old file or the whole new one, never a partial
    one. The folder must exist (nothing is created); an unwritable or
    missing path raises the one-line UsageError and leaves nothing behind.
    """
    path = os.fspath(path)
    check_writable(path)
    folder = os.path.dirname(os.path.abspath(path))
    mode = "wb" if isinstance(data, bytes) else "w"
    # the writer's PID in the name lets a later run remove what a killed one left
    try:
        fd, tmp = tempfile.mkstemp(
            dir=folder, prefix=f".tmp-{os.getpid()}-", suffix=os.path.basename(path)
        )
    except OSError as exc:
        raise _cannot(path, exc) from None
    try:
        with os.fdopen(fd, mode) as fh:
            os.fchmod(fh.fileno(), 0o666 & ~_umask())
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException as exc:
        if os.path.exists(tmp):
            os.unlink(tmp)
        if isinstance(exc, OSError):
            raise _cannot(path, exc) from None
        raise


def save_figure(fig, path: str, **kw) -> None:
    """Render a matplotlib figure in memory (format from the suffix) and
    write it with :func:`atomic_write`."""
    check_writable(path)
    buf = io.BytesIO()
    fmt = os.path.splitext(os.fspath(path))[1].lstrip(".").lower() or "png"
    fig.savefig(buf, format=fmt, **kw)
    atomic_write(path, buf.getvalue())


def remove_stale_temp(folder: str) -> int:
    """Delete the temporary files of :func:`atomic_write` in ``folder`` whose
    writing process no longer exists (killed mid-write: SIGKILL runs no
    cleanup). Files of live writers are left alone. Returns how many went."""
    gone = 0
    try:
        names = os.listdir(folder)
    except OSError:
        return 0
    for name in names:
        parts = name.split("-", 2)
        if len(parts) < 3 or parts[0] != ".tmp" or not parts[1].isdigit():
            continue
        try:
            os.kill(int(parts[1]), 0)
            continue  # its writer is alive
        except ProcessLookupError:
            pass
        except PermissionError:
            continue  # alive, another user's
        try:
            os.unlink(os.path.join(folder, name))
            gone += 1
        except OSError:
            pass
    return gone


def atomic_save_npy(path: str, array) -> None:
    buf = io.BytesIO()
    np.save(buf, np.asarray(array))
    atomic_write(path, buf.getvalue())
