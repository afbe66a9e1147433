"""A writable FUSE pass-through of one directory: a file system without ``O_TMPFILE`` (libfuse2 has no tmpfile).

Run by ``tests/forensics/test_output_signals.py`` with a Python that has fusepy (Debian's python3-fusepy, or
``pip install fusepy``) and libfuse2: ``python3 loopback_fs.py SOURCE_DIR MOUNT_POINT``.  kforensic's output
writer falls back there to a named ``mkstemp`` file, renamed into place (forensics/output.py).
"""

from __future__ import annotations

import os
import sys
from typing import Any

try:
    from fuse import FUSE  # type: ignore[import-not-found]
except ImportError:  # Debian names the module fusepy
    from fusepy import FUSE  # type: ignore[import-not-found,no-redef]

try:
    from tests.forensics.vmcore.eio_fs import PassThrough
except ImportError:  # run as a script by another Python: from this directory
    from eio_fs import PassThrough  # type: ignore[import-not-found,no-redef]


class Loopback(PassThrough):
    """Every operation the output writer uses, on the same path under ``root``."""

    def access(self, path: str, amode: int) -> None:
        os.access(self._path(path), amode)

    def create(self, path: str, mode: int, fi: Any = None) -> int:
        return os.open(self._path(path), os.O_WRONLY | os.O_CREAT | os.O_EXCL, mode)

    def open(self, path: str, flags: int) -> int:
        return os.open(self._path(path), flags)

    def read(self, path: str, size: int, offset: int, fh: int) -> bytes:
        return os.pread(fh, size, offset)

    def write(self, path: str, data: bytes, offset: int, fh: int) -> int:
        return os.pwrite(fh, data, offset)

    def truncate(self, path: str, length: int, fh: Any = None) -> None:
        os.truncate(self._path(path), length)

    def flush(self, path: str, fh: int) -> None:
        pass

    def fsync(self, path: str, datasync: int, fh: int) -> None:
        os.fsync(fh)

    def release(self, path: str, fh: int) -> None:
        os.close(fh)

    def rename(self, old: str, new: str) -> None:
        os.replace(self._path(old), self._path(new))

    def unlink(self, path: str) -> None:
        os.unlink(self._path(path))

    def chmod(self, path: str, mode: int) -> None:
        os.chmod(self._path(path), mode)

    def chown(self, path: str, uid: int, gid: int) -> None:
        os.chown(self._path(path), uid, gid)

    def utimens(self, path: str, times: Any = None) -> None:
        os.utime(self._path(path), times)


if __name__ == "__main__":
    FUSE(Loopback(sys.argv[1]), sys.argv[2], foreground=True, nothreads=True)
