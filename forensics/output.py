"""The one writer of output files: every report, page, plot, export and saved text goes through here.

The rules (documented in docs/cli.md, "Output files"):

* An output that is an input of the same run (the same file after symlinks,
  or the same inode through a hard link, or the file standard input is
  redirected from) is refused, exit 2, naming both.
* A regular file, or a path that does not exist yet, is written to an
  unnamed ``O_TMPFILE`` in the target's directory (a ``mkstemp`` file where
  the file system has none), flushed to disk and linked into place with a
  rename: readers see the old file or the whole new one, and a run that fails
  (full disk, error, Ctrl-C, SIGTERM, SIGKILL) leaves the previous file as it was and
  no temporary file behind (with ``mkstemp``, SIGKILL can leave one; SIGTERM and SIGHUP remove it first).
* A character device (``/dev/null``, a terminal) or a FIFO is written
  through, never replaced: ``-o /dev/null`` as root leaves ``/dev/null`` a
  device.  ``/dev/stdout``, ``/dev/stderr``, ``/dev/fd/N`` and
  ``/proc/self/fd/N`` write to that open descriptor.
* A symbolic link is never followed to replace its target: a link to a
  regular file (or a dangling one) is refused, exit 2; a link to a device or
  FIFO is written through like the device itself.
* A directory, a block device or a socket is refused, exit 2.
* An existing file owned by another user is not replaced unless ``--force``.
* New files are mode 0600 (reports hold kernel data) unless told otherwise.

Inputs register themselves (:func:`register_input`, called by
:func:`collectors.inputs.open_input` and the store opener) so that the check
covers every command without each one listing its inputs.
"""

from __future__ import annotations

import contextlib
import errno
import os
import re
import stat
import sys
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import BinaryIO

from forensics.errors import InputError, UsageError

#: Paths of the inputs read in this run (cleared at the start of each command).
_INPUTS: list[str] = []
#: The file standard input was redirected from in this run, as (device, inode): ``dmesg - -o LOG < LOG``.
_STDIN_FILE: list[tuple[int, int]] = []
#: ``--force``: replace an output file owned by another user.
_FORCE = [False]

_STD_PATHS = {"/dev/stdout": 1, "/dev/stderr": 2}
_FD_PATH = re.compile(r"/(?:dev|proc/self)/fd/(\d+)")


def reset_run(force: bool = False) -> None:
    """Start a new run: forget the inputs of an earlier one (tests run many in one process)."""
    _INPUTS.clear()
    _STDIN_FILE.clear()
    _FORCE[0] = force


def set_force(force: bool) -> None:
    """Let this run replace output files owned by other users (the command's ``--force``)."""
    _FORCE[0] = force


def register_input(path: str | os.PathLike[str]) -> None:
    """Note that this run reads ``path``: no output of the run may be written over it."""
    name = os.fspath(path)
    if name not in ("-", "") and name not in _INPUTS:
        _INPUTS.append(name)


def register_stdin(st: os.stat_result) -> None:
    """Note that this run reads standard input, redirected from the regular file of ``st``: no output may replace it
    (its name is not known, so :func:`register_input` cannot say it)."""
    if stat.S_ISREG(st.st_mode):
        _STDIN_FILE[:] = [(st.st_dev, st.st_ino)]


def inputs() -> tuple[str, ...]:
    """The inputs registered in this run."""
    return tuple(_INPUTS)


def _same_file(a: str, b: str) -> bool:
    try:
        return os.path.samefile(a, b)
    except (OSError, ValueError):
        return False


def _refuse_if_same(target: Path, name: str) -> None:
    if _same_file(os.fspath(target), name):
        raise UsageError(
            f"output {target} is the input {name} of this run: writing it would destroy the evidence",
            hint="give the output another path",
        )


def check_not_input(target: Path) -> None:
    """Refuse (exit 2) an output that resolves to an input of this run, via symlinks or hard links."""
    for name in _INPUTS:
        _refuse_if_same(target, name)
    if _STDIN_FILE:
        try:
            st = os.stat(target)
        except (OSError, ValueError):
            return
        if (st.st_dev, st.st_ino) == _STDIN_FILE[0]:
            raise UsageError(
                f"output {target} is the file standard input reads in this run: writing it would destroy the evidence",
                hint="give the output another path",
            )


def check_outputs_not_named_inputs(outputs: Iterable[Path | None], named: Iterable[Path | None]) -> None:
    """Refuse (exit 2), before anything is read, an output that resolves to an input the command line names, as
    :func:`check_not_input` refuses it when the output is written: a command whose analysis is long (report: its
    analyses and their figures, ~2 s of CPU on a small store) otherwise ran it whole to say so, and left its figures
    beside the refused output."""
    names = [os.fspath(name) for name in named if name is not None]
    for target in outputs:
        if target is not None:
            for name in names:
                _refuse_if_same(target, name)


def check_output_directories(outputs: Iterable[Path | None]) -> None:
    """Refuse (exit 3), before anything is read, an output file whose directory does not exist.

    Every output is written in its own directory (a temporary file linked into place), so such an output fails when
    it is written, after the analysis: ``report``'s plots beside its page were made first, and their directory with
    its missing parents (a typo'd ``-o /ect/incident.md`` under sudo made ``/ect`` at the root).
    """
    for target in outputs:
        if target is None or written_through(target):
            continue
        directory = target.parent
        if not directory.is_dir():
            what = "is not a directory" if os.path.lexists(directory) else "does not exist"
            raise InputError(
                f"cannot write {target}: its directory {directory} {what}",
                hint="create the directory first, or choose another output path",
            )


def _std_fd(path: Path) -> int | None:
    """The descriptor a ``/dev/stdout``-like path names, else None."""
    name = os.fspath(path)
    if name in _STD_PATHS:
        return _STD_PATHS[name]
    match = _FD_PATH.fullmatch(name)
    return int(match.group(1)) if match else None


def written_through(path: Path) -> bool:
    """Whether :func:`open_output` writes ``path`` through (a standard stream, ``/dev/fd/N``, a character device or a
    FIFO, also behind a link) instead of replacing a file: such a path has no directory for files beside it, and
    two outputs may name it."""
    if _std_fd(path) is not None:
        return True
    try:
        mode = os.stat(path).st_mode
    except OSError:
        return False  # a new path: a file
    return stat.S_ISCHR(mode) or stat.S_ISFIFO(mode)


def _write_error(path: Path | str, exc: OSError) -> InputError:
    hint = "free some space, or write elsewhere" if exc.errno == errno.ENOSPC else "choose a writable output path"
    return InputError(f"cannot write {path}: {exc.strerror or exc}", hint=hint)


@contextlib.contextmanager
def _write_through(path: Path | str, fd: int) -> Iterator[BinaryIO]:
    """Write to an already open descriptor (a device, a FIFO, standard output)."""
    try:
        with os.fdopen(fd, "wb", closefd=True) as out:
            yield out
    except OSError as exc:
        if exc.errno == errno.EPIPE:
            reader_went_away()
        raise _write_error(path, exc) from None


def reader_went_away() -> None:
    """The reader of our output closed it early (``| head``): stop quietly with exit 0, as coreutils do.

    Standard output is pointed at /dev/null first, so that the interpreter's
    last flush of what is still buffered does not fail again.
    """
    with contextlib.suppress(OSError, ValueError, AttributeError), open(os.devnull, "wb") as null:
        os.dup2(null.fileno(), sys.stdout.fileno())
    raise SystemExit(0)


#: What a file of each type is called in messages (``stat.S_IFMT`` of its mode).
_KINDS = {
    stat.S_IFDIR: "a directory",
    stat.S_IFCHR: "a character device",
    stat.S_IFBLK: "a block device",
    stat.S_IFIFO: "a FIFO",
    stat.S_IFSOCK: "a socket",
    stat.S_IFLNK: "a symbolic link",
    stat.S_IFREG: "a regular file",
}


def file_kind(mode: int) -> str:
    """What a file of ``mode`` (from stat) is, for a message: "a character device"."""
    return _KINDS.get(stat.S_IFMT(mode), "not a regular file")


def _refuse_kind(path: Path, st: os.stat_result) -> None:
    if stat.S_ISDIR(st.st_mode) or stat.S_ISBLK(st.st_mode) or stat.S_ISSOCK(st.st_mode):
        why = " (writing would overwrite the disk)" if stat.S_ISBLK(st.st_mode) else ""
        raise UsageError(f"cannot write {path}: it is {file_kind(st.st_mode)}{why}", hint="give a file path")


@contextlib.contextmanager
def open_output(path: Path, mode: int = 0o600, *, force: bool | None = None) -> Iterator[BinaryIO]:
    """A binary stream for the output ``path``, following the rules of this module.

    For a regular file the data goes to a temporary file that replaces
    ``path`` only when the ``with`` block ends without an exception.  Raises
    :class:`UsageError` (exit 2) for refused targets and :class:`InputError`
    (exit 3) when writing fails.
    """
    path = Path(path)
    check_not_input(path)
    std = _std_fd(path)
    if std is not None:
        with contextlib.ExitStack() as stack:
            if std == 1 and sys.stdout is not None:
                sys.stdout.flush()
            try:
                fd = os.dup(std)
            except OSError as exc:
                raise _write_error(path, exc) from None
            yield stack.enter_context(_write_through(path, fd))
        return
    try:
        st: os.stat_result | None = os.lstat(path)
    except FileNotFoundError:
        st = None
    except OSError as exc:
        raise _write_error(path, exc) from None
    if st is not None and stat.S_ISLNK(st.st_mode):
        real = os.path.realpath(path)
        try:
            st = os.stat(path)
        except OSError:
            st = None
        if st is None or not (stat.S_ISCHR(st.st_mode) or stat.S_ISFIFO(st.st_mode)):
            raise UsageError(
                f"{path} is a symbolic link to {real}: kforensic does not replace a link's target",
                hint=f"give the target itself (-o {real}) or another path",
            )
    if st is not None:
        _refuse_kind(path, st)
        if stat.S_ISCHR(st.st_mode) or stat.S_ISFIFO(st.st_mode):
            try:
                fd = os.open(path, os.O_WRONLY | os.O_NOCTTY | os.O_CLOEXEC)
            except OSError as exc:
                raise _write_error(path, exc) from None
            with _write_through(path, fd) as out:
                yield out
            return
        allowed = _FORCE[0] if force is None else force
        if st.st_uid != os.geteuid() and not allowed:
            raise UsageError(
                f"{path} belongs to another user (uid {st.st_uid}): not replacing it",
                hint="give another path, or --force to replace it",
            )
    with _replace(path, mode) as out:
        yield out


def _anonymous(directory: Path, mode: int) -> int | None:
    """An unnamed file in ``directory`` (``O_TMPFILE``, Linux >= 3.11 on ext4, xfs, btrfs, tmpfs), or None.

    Killed before it is linked, the run leaves nothing behind: there is no
    temporary name to clean up.  None where the kernel or file system has no
    ``O_TMPFILE`` (EOPNOTSUPP, EISDIR before 3.11, no attribute off Linux).
    """
    flag = getattr(os, "O_TMPFILE", None)
    if flag is None:
        return None
    try:
        return os.open(directory, flag | os.O_WRONLY | os.O_CLOEXEC, mode)
    except OSError as exc:
        if exc.errno in (errno.EOPNOTSUPP, errno.EISDIR, errno.EINVAL, errno.ENOENT):
            return None  # (ENOENT: a kernel that reads O_TMPFILE as O_DIRECTORY|O_CREAT on a missing path)
        raise


def _link_into_place(fd: int, directory: Path, path: Path) -> None:
    """Give the unnamed file ``fd`` the name ``path``: link it beside it, then rename over ``path`` (atomic)."""
    dir_fd = os.open(directory, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        for _ in range(100):
            name = f".{path.name}.{os.urandom(6).hex()}.tmp"
            try:
                # linkat(AT_SYMLINK_FOLLOW) through /proc (no CAP_DAC_READ_SEARCH needed, unlike AT_EMPTY_PATH);
                # a dir_fd makes CPython call linkat, its plain link() would not follow the /proc link.
                os.link(f"/proc/self/fd/{fd}", name, dst_dir_fd=dir_fd, follow_symlinks=True)
                break
            except FileExistsError:
                continue
        else:
            raise FileExistsError(errno.EEXIST, "no free temporary name", str(directory))
        try:
            os.replace(name, path.name, src_dir_fd=dir_fd, dst_dir_fd=dir_fd)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(name, dir_fd=dir_fd)
            raise
    finally:
        os.close(dir_fd)


@contextlib.contextmanager
def _replace(path: Path, mode: int) -> Iterator[BinaryIO]:
    """Write a new file and put it in place of ``path`` only when the block ends: old or whole new, never a mix.

    The data goes to an unnamed ``O_TMPFILE`` in the target's directory,
    flushed to disk and linked into place with a rename; where the file system
    has no ``O_TMPFILE``, to a ``mkstemp`` file there, flushed and renamed.
    """
    directory = path.parent if str(path.parent) else Path(".")
    tmp: str | None = None
    with contextlib.ExitStack() as named:
        try:
            fd = _anonymous(directory, mode)
            if fd is None:
                # A named file until its rename: SIGTERM, whose default action runs no cleanup, left it behind.
                named.enter_context(_removed_before_termination())
                import tempfile  # here: only file systems without O_TMPFILE need it (2-3 ms of every start-up)

                fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=directory)
        except OSError as exc:
            raise InputError(
                f"cannot write {path}: {exc.strerror or exc}", hint="choose a writable output path"
            ) from None
        try:
            with os.fdopen(fd, "wb") as out:
                os.fchmod(out.fileno(), mode)
                yield out
                out.flush()
                os.fsync(out.fileno())
                if tmp is None:
                    with signals_held():  # (a signal between its link and its rename would leave the link's name)
                        _link_into_place(out.fileno(), directory, path)
            if tmp is not None:
                os.replace(tmp, path)
        except BaseException as exc:
            if tmp is not None:
                Path(tmp).unlink(missing_ok=True)
            if isinstance(exc, OSError) and not isinstance(exc, BrokenPipeError):
                raise _write_error(path, exc) from None
            raise
    with contextlib.suppress(OSError):  # the rename is durable once the directory is on disk
        dir_fd = os.open(directory, os.O_RDONLY | os.O_DIRECTORY)
        try:
            os.fsync(dir_fd)
        finally:
            os.close(dir_fd)


#: The signals that end a run by default (SIGINT: KeyboardInterrupt), held by :func:`signals_held`: named, as
#: ``signal`` is imported where a file is made (its import, ~0.5 ms, is for the runs that write one).
HELD_SIGNALS = ("SIGTERM", "SIGINT", "SIGHUP")


@contextlib.contextmanager
def signals_held() -> Iterator[list[int]]:
    """Hold SIGTERM, SIGINT and SIGHUP while a file is half made, then let the first that came act as it would have.

    For the few steps a signal must not cut (a store's tables created, a named temporary file until it is
    renamed): the default action of SIGTERM kills at once, with no ``finally`` run, and left a store
    without its tables (which the next ``slab-watch`` refused: "not a slab-watch store") or a named
    temporary output.  Yields the signals that arrived.  Outside the main thread (where Python handles
    signals) it holds nothing.
    """
    import signal
    import threading

    arrived: list[int] = []
    if threading.current_thread() is not threading.main_thread():
        yield arrived
        return

    def hold(signum: int, _frame: object) -> None:
        arrived.append(signum)

    saved: dict[signal.Signals, signal._HANDLER] = {}
    try:
        for name in HELD_SIGNALS:
            held = signal.Signals[name]
            saved[held] = signal.signal(held, hold)
        yield arrived
    finally:
        for held, before in saved.items():
            # (None: a handler not set from Python; the default is what a Python program has then)
            signal.signal(held, before if before is not None else signal.SIG_DFL)
        if arrived:  # now, with the action it had: the process ends (SIGINT: KeyboardInterrupt) or ignores it
            os.kill(os.getpid(), arrived[0])


class _Terminated(BaseException):
    """SIGTERM or SIGHUP arrived while a named temporary output was open (see :func:`_removed_before_termination`)."""

    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = signum


@contextlib.contextmanager
def _removed_before_termination() -> Iterator[None]:
    """SIGTERM and SIGHUP (where their action is the default, in the main thread) raise inside the block, so that
    the cleanup of a named temporary file runs; then the signal is sent again and ends the process as it would
    have (exit 143 from a shell).  Not held: a long write still ends when told to, only after its cleanup."""
    import signal
    import threading

    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def stop(signum: int, _frame: object) -> None:
        raise _Terminated(signum)

    caught = [sig for sig in (signal.SIGTERM, signal.SIGHUP) if signal.getsignal(sig) == signal.SIG_DFL]
    for sig in caught:
        signal.signal(sig, stop)
    try:
        yield
    except _Terminated as exc:
        for sig in caught:
            signal.signal(sig, signal.SIG_DFL)
        os.kill(os.getpid(), exc.signum)
        raise  # (not reached: the default action ends the process)
    finally:
        for sig in caught:
            signal.signal(sig, signal.SIG_DFL)


def encode_text(data: str) -> bytes:
    """UTF-8, with undecodable path bytes (surrogate escapes) shown as ``\\udcXX`` instead of failing."""
    return data.encode("utf-8", "backslashreplace")


def write_atomic(path: Path, data: str | bytes, mode: int = 0o600, *, force: bool | None = None) -> None:
    """Write ``data`` to ``path`` by the rules of this module (atomic for files, through for devices).

    Raises :class:`UsageError` for a refused target (an input of the run, a
    symlink to a file, a directory, another user's file without ``force``)
    and :class:`InputError` when writing fails (the old file is then kept).
    """
    payload = encode_text(data) if isinstance(data, str) else data
    with open_output(path, mode, force=force) as out:
        out.write(payload)


def output_directory(path: Path) -> Path:
    """Create the output directory ``path`` (0700) if needed; exit 3 in one line when it cannot be one."""
    try:
        if path.is_symlink() and not path.is_dir():
            raise UsageError(f"{path} is a symbolic link, not a directory", hint="give a directory path")
        path.mkdir(mode=0o700, parents=True, exist_ok=True)
    except FileExistsError:
        raise InputError(f"cannot use {path} as a directory: it is a file", hint="give a directory path") from None
    except NotADirectoryError:
        raise InputError(f"cannot create {path}: a part of it is a file", hint="give a directory path") from None
    except OSError as exc:
        raise InputError(f"cannot create {path}: {exc.strerror or exc}", hint="give a writable directory") from None
    return path
