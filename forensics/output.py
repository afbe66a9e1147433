"""Writing output files atomically, private to the user (kernel data is sensitive)."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from forensics.errors import InputError


def write_atomic(path: Path, data: str | bytes, mode: int = 0o600) -> None:
    """Write ``data`` to ``path`` so readers see the old file or the whole new one.

    The file is created with ``mode`` (0600 by default: reports hold kernel
    data), written to a temporary file beside it, flushed to disk and renamed
    into place.  Raises :class:`InputError` when the directory is not writable.
    """
    payload = data.encode() if isinstance(data, str) else data
    directory = path.parent if str(path.parent) else Path(".")
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=directory)
    except OSError as exc:
        raise InputError(
            f"cannot write {path}: {exc.strerror or exc}", hint="choose a writable output path with -o"
        ) from None
    try:
        with os.fdopen(fd, "wb") as out:
            os.fchmod(out.fileno(), mode)
            out.write(payload)
            out.flush()
            os.fsync(out.fileno())
        os.replace(tmp, path)
    except BaseException as exc:
        Path(tmp).unlink(missing_ok=True)
        if isinstance(exc, OSError):
            raise InputError(f"cannot write {path}: {exc.strerror or exc}") from None
        raise
