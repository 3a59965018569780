"""Small I/O helpers: atomic writes and JSON that is always valid."""

from __future__ import annotations

import json
import math
import os
import tempfile

import numpy as np


def jsonable(obj):
    """Convert numpy scalars/arrays and non-finite floats (to None)."""
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


def atomic_write(path: str, data: bytes | str) -> None:
    """Write to a temporary file in the same folder, fsync, then rename:
    readers see the old file or the whole new one, never a partial one."""
    path = os.fspath(path)
    folder = os.path.dirname(os.path.abspath(path))
    os.makedirs(folder, exist_ok=True)
    mode = "wb" if isinstance(data, bytes) else "w"
    # the writer's PID in the name lets a later run remove what a killed one left
    fd, tmp = tempfile.mkstemp(
        dir=folder, prefix=f".tmp-{os.getpid()}-", suffix=os.path.basename(path)
    )
    try:
        with os.fdopen(fd, mode) as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


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
    import io as _io  # stdlib

    buf = _io.BytesIO()
    np.save(buf, np.asarray(array))
    atomic_write(path, buf.getvalue())
