"""DAG target files shipped with their cells.

A ``file:`` target names a file; its cell carries the file's contents too
(``target_file``: the SHA-256 and the text), written where the config is
expanded (:func:`attach`, in the client). So the cell's storage key changes
when the file is edited (its cells are recomputed, never reused), and a
worker computing the cell reads the shipped text (:func:`provide`), needing
no shared filesystem. Cells of other targets are left as they are (their
keys unchanged).
"""

from __future__ import annotations

import hashlib
import os

from ntkgap.targets import dag

#: the cell field holding a DAG target file's contents
FIELD = "target_file"


def attach(cell: dict) -> dict:
    """The cell with its DAG target file's contents (a ``file:`` target).

    The path is resolved against this process's working folder; a file that
    cannot be read (or a ``{L}`` family path) is left for validation to report.

    Args:
        cell: a cell dict.

    Returns:
        the cell itself, or a new dict with ``target_file`` =
        ``{"sha256": hex digest, "text": contents}``.
    """
    path = dag.spec_path(cell.get("target"))
    if not path or "{L}" in path:
        return cell
    try:
        with open(os.path.abspath(path), "rb") as fh:
            data = fh.read()
        text = data.decode()
    except (OSError, UnicodeDecodeError):
        return cell
    return dict(cell, **{FIELD: {"sha256": hashlib.sha256(data).hexdigest(), "text": text}})


def provide(cell: dict) -> None:
    """Makes a cell's shipped DAG file contents the file's in this process.

    Args:
        cell: a cell dict (with or without ``target_file``).

    Returns:
        None.
    """
    shipped = cell.get(FIELD)
    path = dag.spec_path(cell.get("target"))
    if shipped and path:
        dag.provide(path, shipped["text"])
