"""Reading files of a target system under a root directory, recording what was read.

A root tree (``--root DIR``) is a copy or mount of another system: absolute
symbolic links inside it point into *that* system, so they are resolved
against the root, never against the machine running kforensic.
"""

from __future__ import annotations

import errno
import hashlib
import os
import stat
import time
import zlib
from collections.abc import Callable
from pathlib import Path
from typing import BinaryIO, NamedTuple

from collectors.inputs import SOURCE_SUFFIX
from forensics.evidence import iter_text_lines
from forensics.model import NotAvailable, SourceRecord
from forensics.types.kdump import MaybeFile, ReadProblem, TextFile

_MAX_SYMLINKS = 40  # as the kernel's own limit on nested links
_MAX_TEXT_BYTES = 4 << 20  # configuration and proc files are small; refuse to slurp a disk image


def _read_upto(stream: BinaryIO, limit: int) -> bytes:
    """Read at most ``limit`` bytes in small chunks: /proc/sys refuses huge reads with ENOMEM."""
    chunks = []
    left = limit
    while left > 0 and (chunk := stream.read(min(left, 1 << 16))):
        chunks.append(chunk)
        left -= len(chunk)
    return b"".join(chunks)


class VfsStat(NamedTuple):
    """The part of ``os.statvfs`` the free-space check needs."""

    f_frsize: int
    f_blocks: int
    f_bavail: int


#: Measures a directory's file system; ``os.statvfs`` on a live system, a fake in tests.
StatvfsProvider = Callable[[str], VfsStat]


def real_statvfs(path: str) -> VfsStat:
    """``os.statvfs`` reduced to :class:`VfsStat`."""
    st = os.statvfs(path)
    return VfsStat(st.f_frsize, st.f_blocks, st.f_bavail)


def missing(path: str) -> NotAvailable:
    """The NotAvailable of a file that does not exist on the target."""
    return NotAvailable(f"{path} does not exist")


def _is_link(path: Path) -> bool:
    """Whether ``path`` is a symbolic link; False where a directory above it cannot be searched (a /usr of mode 000
    under --root): the read that follows meets the same error and says the path unknown, with why."""
    try:
        return path.is_symlink()
    except OSError:
        return False


class RootReader:
    """Reads target paths under ``root``; keeps a :class:`SourceRecord` per file and the read problems.

    A file is read once: a second read of it (a BLS entry for the boot configuration, then for the entry the boot
    loader boots; a kdump configuration, then as a file setup may change) returns the first read's bytes, so that
    ``sources`` lists each file once, as what one snapshot of the system was made of.
    """

    def __init__(self, root: Path) -> None:
        self.root = root
        self.sources: list[SourceRecord] = []
        self.problems: list[ReadProblem] = []
        self._read: dict[tuple[str, int], bytes | NotAvailable] = {}

    def host_path(self, target: str) -> Path:
        """The file under the root that stands for ``target``, following links inside the root."""
        if self.root == Path("/"):
            return Path(target)
        parts = [p for p in target.split("/") if p]
        resolved: list[str] = []
        hops = 0
        while parts:
            name = parts.pop(0)
            if name == ".":
                continue
            if name == "..":
                if resolved:
                    resolved.pop()
                continue
            candidate = self.root.joinpath(*resolved, name)
            if _is_link(candidate) and hops < _MAX_SYMLINKS:
                hops += 1
                link = os.readlink(candidate)
                if link.startswith("/"):
                    resolved = []
                parts = [p for p in link.split("/") if p] + parts
                continue
            resolved.append(name)
        return self.root.joinpath(*resolved)

    def exists(self, target: str) -> bool:
        """Whether ``target`` exists on the target system (following links inside the root); False, with the read
        problem recorded, where it cannot be looked up (a directory above it that cannot be searched)."""
        return self.look_up(target) is True

    def look_up(self, target: str) -> bool | NotAvailable:
        """Whether ``target`` exists; NotAvailable (a read problem of its directory, or of ``target`` itself) when
        it cannot be looked up.

        :meth:`exists` raises or answers False where the directory cannot be searched (EACCES, ELOOP): a program
        there would be called absent.  Where the directory was searched and the name is there, the error is the
        name's own (a link that loops): a problem of ``target``, not of its directory.
        """
        try:
            self.host_path(target).stat()
        except (FileNotFoundError, NotADirectoryError):
            return False
        except OSError as exc:
            try:
                self.host_path_parent(target).lstat()  # needs only the directory searched
            except OSError:
                directory = target.rsplit("/", 1)[0] or "/"
                return self._problem(directory, self.root / directory.lstrip("/"), exc)
            return self._problem(target, self.host_path_parent(target), exc)
        return True

    def link_exists(self, target: str) -> bool:
        """Whether ``target`` exists as a name, even a dangling link (unit enablement links)."""
        return os.path.lexists(self.host_path_parent(target))

    def host_path_parent(self, target: str) -> Path:
        """Like :meth:`host_path`, but the last component is not followed."""
        head, _, name = target.rstrip("/").rpartition("/")
        return self.host_path(head or "/") / name

    def listdir(self, target: str) -> list[str]:
        """Sorted names in a target directory; empty when it is missing or unreadable."""
        path = self.host_path(target)
        try:
            return sorted(os.listdir(path))
        except FileNotFoundError:
            return []
        except OSError as exc:
            if exc.errno != errno.ENOTDIR:
                self._problem(target, path, exc)
            return []

    def size(self, target: str) -> int | NotAvailable:
        """Size in bytes of a target file."""
        path = self.host_path(target)
        try:
            return path.stat().st_size
        except FileNotFoundError:
            return missing(target)
        except OSError as exc:
            self._problem(target, path, exc)
            return NotAvailable(f"cannot stat {target}: {exc.strerror or exc}")

    def read_bytes(self, target: str, limit: int = _MAX_TEXT_BYTES) -> bytes | NotAvailable:
        """The bytes of a target file (at most ``limit``), recorded as a source (once: see the class)."""
        key = (target, limit)
        if key not in self._read:
            self._read[key] = self._read_bytes(target, limit)
        return self._read[key]

    def _read_bytes(self, target: str, limit: int) -> bytes | NotAvailable:
        path = self.host_path(target)
        started = time.monotonic()
        try:
            st = path.stat()
            if stat.S_ISDIR(st.st_mode):
                raise IsADirectoryError(errno.EISDIR, "Is a directory")
            if not stat.S_ISREG(st.st_mode):
                # A FIFO or device would block or stream forever; /proc and /sys files are regular.
                raise OSError(errno.EINVAL, "not a regular file")
            with path.open("rb") as stream:
                data = _read_upto(stream, limit)
        except FileNotFoundError:
            return missing(target)
        except OSError as exc:
            return self._problem(target, path, exc)
        self.sources.append(
            SourceRecord(
                path=str(path),
                size=len(data),
                sha256=hashlib.sha256(data).hexdigest(),
                seconds=round(time.monotonic() - started, 6),
            )
        )
        return data

    def read_text(self, target: str, limit: int = _MAX_TEXT_BYTES) -> MaybeFile:
        """A target text file split into lines the way evidence is checked."""
        data = self.read_bytes(target, limit)
        if isinstance(data, NotAvailable):
            return data
        return self._text_file(target, data, str(self.host_path(target)))

    def read_gzip_text(self, target: str) -> MaybeFile:
        """A gzip-compressed target text file (``/proc/config.gz``), decompressed: cited as ``SOURCE (gunzipped)``,
        its lines counted in the decompressed text, as a compressed log's findings cite it."""
        data = self.read_bytes(target)
        if isinstance(data, NotAvailable):
            return data
        inflate = zlib.decompressobj(wbits=16 + zlib.MAX_WBITS)
        try:
            text = inflate.decompress(data, _MAX_TEXT_BYTES)
        except zlib.error as exc:
            return NotAvailable(f"cannot read {target}: not gzip data ({exc})")
        if not inflate.eof:
            cut = "more than 4 MiB of text" if inflate.unconsumed_tail else "its gzip stream is cut short"
            return NotAvailable(f"cannot read {target}: {cut}")
        return self._text_file(target, text, f"{self.host_path(target)}{SOURCE_SUFFIX['gzip']}")

    @staticmethod
    def _text_file(target: str, data: bytes, source: str) -> TextFile:
        lines = list(iter_text_lines(data))
        if lines and lines[-1] == "" and data.endswith(b"\n"):
            lines.pop()  # the empty string after the final newline is not a line
        cr = (
            frozenset(i for i, raw in enumerate(data.split(b"\n"), 1) if raw.endswith(b"\r")) if b"\r" in data else None
        )
        return TextFile(path=target, source=source, lines=tuple(lines), cr_lines=cr or frozenset())

    def _problem(self, target: str, path: Path, exc: OSError) -> NotAvailable:
        reason = exc.strerror or str(exc)
        if all(p.path != target for p in self.problems):  # a file read twice is one problem
            self.problems.append(ReadProblem(target, reason, errno.errorcode.get(exc.errno or 0, "")))
        self.sources.append(
            SourceRecord(
                path=str(path), size=NotAvailable(reason), sha256=NotAvailable(reason), seconds=0.0, error=reason
            )
        )
        return NotAvailable(f"cannot read {target}: {reason}")
