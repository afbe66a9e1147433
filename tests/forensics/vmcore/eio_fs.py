"""A read-only FUSE file system serving one directory, whose ``vmcore`` fails one byte range with EIO.

Run by ``tests/forensics/vmcore/test_dump_eio.py`` (and by the kdump check's unreadable configuration test) with a
Python that has fusepy (Debian's python3-fusepy, or ``pip install fusepy``) and libfuse2:
``python3 eio_fs.py SOURCE_DIR MOUNT_POINT START END [NAME]``.  A read that
overlaps ``[START, END)`` of the file ``NAME`` (default ``vmcore``) fails as a failing disk sector does.
"""

from __future__ import annotations

import errno
import os
import sys
from typing import Any

try:
    from fuse import FUSE, FuseOSError, Operations  # type: ignore[import-not-found]
except ImportError:  # Debian names the module fusepy
    from fusepy import FUSE, FuseOSError, Operations  # type: ignore[import-not-found,no-redef]


class PassThrough(Operations):  # type: ignore[misc]
    """What every pass-through of ``root`` offers: attributes and listings (loopback_fs.py adds the writes)."""

    def __init__(self, root: str) -> None:
        self.root = root

    def _path(self, path: str) -> str:
        return os.path.join(self.root, path.lstrip("/"))

    def getattr(self, path: str, fh: Any = None) -> dict[str, Any]:
        st = os.lstat(self._path(path))
        keys = ("st_mode", "st_size", "st_uid", "st_gid", "st_nlink", "st_atime", "st_mtime", "st_ctime")
        return {k: getattr(st, k) for k in keys}

    def readdir(self, path: str, fh: Any) -> list[str]:
        return [".", "..", *os.listdir(self._path(path))]

    def readlink(self, path: str) -> str:
        return os.readlink(self._path(path))


class EioFs(PassThrough):
    """Pass-through of ``root`` (read only); reads of ``name`` overlapping the bad range fail."""

    def __init__(self, root: str, start: int, end: int, name: str = "vmcore") -> None:
        super().__init__(root)
        self.start, self.end, self.name = start, end, name

    def open(self, path: str, flags: int) -> int:
        if flags & (os.O_WRONLY | os.O_RDWR):
            raise FuseOSError(errno.EROFS)
        return os.open(self._path(path), os.O_RDONLY)

    def read(self, path: str, size: int, offset: int, fh: int) -> bytes:
        if os.path.basename(path) == self.name and offset < self.end and offset + size > self.start:
            raise FuseOSError(errno.EIO)
        return os.pread(fh, size, offset)

    def release(self, path: str, fh: int) -> int:
        os.close(fh)
        return 0


if __name__ == "__main__":
    source, mount, start, end = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
    FUSE(EioFs(source, start, end, *sys.argv[5:6]), mount, foreground=True, ro=True, nothreads=True, allow_other=False)
