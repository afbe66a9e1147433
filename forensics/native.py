"""Python modules compiled to C by mypyc, loaded in place of their source when built (``make compile``).

Why: ``kforensic dmesg`` spends most of a report-dense log in per-line Python (the line parser, the report
builder's walk over a window): each step is a regex match, a few conversions and a tuple, at the
interpreter's floor.  numba's compiled code (:mod:`forensics.aot`) cannot take them: its modules import numpy,
354 M instructions (~0.1 s) before a byte is read, more than the whole line parse of the shared corpus; and its
kernels take arrays, not the strings and tuples these steps are made of.  mypyc compiles the same typed source
to C (no numpy, no LLVM): the loops, calls and attribute reads run without the interpreter (docs/dmesg.md,
"ninth part").

What: a :class:`Group` names modules of one package built together into one directory of extension modules
(mypyc's group library and one module per source), under ``cache_dir()/native`` of :mod:`forensics.jit` (per
user, outside the install).  The directory name carries a key over the sources, those of the project's modules
they import (``Group.reads``), this module and the interpreter, so a changed source is never run compiled from
an old build.  A ``MANIFEST`` written last (once
the files are on disk) holds each file's size and modification time, checked before anything is loaded: a file
cut short (a full disk) or written over since is not mapped (see :func:`forensics.aot._intact`).  Not its
SHA-256, as :mod:`forensics.aot` checks: the modules are ~3 MB, 2.5 ms of every run with the CPU's SHA
instructions (100 M instructions without them, under valgrind), against a ``stat`` a file.

:func:`install` (called by the package's ``__init__``) puts a finder in front of the import system that gives
the built modules for their names; without a build, with ``KFORENSIC_AOT=no``, or with anything unexpected,
nothing is installed and the Python source runs, as before: it stays the meaning, and
tests/detectors/dmesg/test_native.py checks that both give the same output on the bundled logs.

Building needs mypyc (installed with mypy: the compile extra, which make compile installs), a C compiler and
Python's headers; it runs in a subprocess (mypyc's setuptools build), 1-3 min on 2 cores, announced on stderr; a
failure is said, and the Python source runs.
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib.machinery
import importlib.util
import os
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from types import ModuleType

from forensics import cachetrim
from forensics.jit import AOT_ENV, cache_dir, switch

_MANIFEST = "MANIFEST"
_SUFFIX = importlib.machinery.EXTENSION_SUFFIXES[0]  # this interpreter's (".cpython-311-x86_64-linux-gnu.so")


class Group:
    """Modules compiled together: ``modules`` by name (one package's), ``seconds`` the expected build time;
    ``reads``: the project's modules they import, directly or through one another, that are not compiled.

    ``reads`` are in the build's key with the group's own sources: mypyc compiles a module against the types (and
    ``Final`` constants, inlined) of everything it imports, so a build made before one of those changed could
    raise a TypeError or use an old constant after an upgrade that changed only that file.  The list is declared,
    not found at run time (an import graph walk costs tens of ms a run); tests/detectors/dmesg/test_native.py
    checks it against the group's imports.

    A plain class, not a dataclass: it is made at the import of the package, in every run (a dataclass compiles
    its methods then).
    """

    __slots__ = ("modules", "name", "reads", "seconds", "what")

    def __init__(
        self, name: str, modules: tuple[str, ...], seconds: float, what: str, reads: tuple[str, ...] = ()
    ) -> None:
        self.name, self.modules, self.seconds, self.what, self.reads = name, modules, seconds, what, reads


def _source(module: str) -> Path:
    """The source file of ``module`` (found without importing it: its package is being imported, or, not imported,
    found from the install's root as :func:`_read_source` finds it)."""
    package, _, leaf = module.rpartition(".")
    if package not in sys.modules:  # a group built by a layer that may not import it (DMESG_DOCUMENT's builder)
        return _read_source(module)
    paths = getattr(sys.modules[package], "__path__", None)
    if paths is None:
        raise RuntimeError(f"{package} is not an imported package")
    for directory in paths:
        path = os.path.join(directory, f"{leaf}.py")  # os.path, not pathlib: at every run's start
        if os.path.isfile(path):
            return Path(path)
    raise RuntimeError(f"no source for {module}")


_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))  # the install's root: forensics' and others'


def _read_source(module: str) -> Path:
    """The source file of ``module``, one the group reads (its package may not be imported yet): found from
    the install's root (a package's ``__init__.py`` when the name is a package's)."""
    base = os.path.join(_ROOT, *module.split("."))
    return Path(os.path.join(base, "__init__.py") if os.path.isdir(base) else f"{base}.py")


#: What the key of a group's build was for its files as they stood: ``cache_dir()/native/<group>.keys``, lines of
#: the SHA-256 of the files' paths and ``stat`` fields (size, modification and change times in nanoseconds, inode)
#: and the key, written once the build of that key exists (the last :data:`_KEYS_KEPT`: a checkout and an install
#: side by side keep theirs).
_KEYS_KEPT = 8

#: git's "racy" rule: a file's ``stat`` fields stand for its content only once its times are older than this when
#: they are remembered.  A file written over in the same tick of the change time's clock keeps every field (one
#: second on a filesystem of 1-second times, FAT's two; one jiffy on a kernel before 6.13, which stamps the change
#: time from the coarse clock), so fields seen within the tick may stand for a content that no longer is.
_RACY_NS = 3_000_000_000


def _trusted(stats: Sequence[os.stat_result], now_ns: int) -> bool:
    """Whether the ``stat`` fields of a group's files may stand for their content from now on: every file's
    modification and change times older than :data:`_RACY_NS`, and each change time finer than a second (a change
    time without a sub-second part is a filesystem of 1- or 2-second times, or squashfs, whose change times are its
    image's modification time and whose inodes are its image's, the same for two builds of one tree)."""
    return all(
        st.st_ctime_ns % 1_000_000_000 != 0 and max(st.st_mtime_ns, st.st_ctime_ns) < now_ns - _RACY_NS for st in stats
    )


def group_dir(group: Group, environ: dict[str, str] | os._Environ[str] = os.environ) -> Path:
    """Where ``group`` is (or would be) built for the current sources (its own and those it reads) and
    interpreter.

    The key is the SHA-256 of the sources (and of this module and the interpreter's version), read and hashed
    only when their ``stat`` fields are not those a run saw before (the ``.keys`` file): ~450 KB of the dmesg
    group's, ~0.5 ms of every run, where a ``stat`` a file is ~2 us.  A file written over has another change
    time (which no program sets back) even where its size and modification time are the same, as Python's own
    bytecode cache does not check, once the clock of change times has moved on: fields are remembered only when
    :func:`_trusted` (git's "racy" rule; before it, a same-size edit within one tick of a 1-second filesystem
    loaded the build of the sources before it).
    """
    named = [("", Path(__file__))]
    named += [(m, _source(m)) for m in group.modules]
    named += [(m, _read_source(m)) for m in group.reads]
    seen = hashlib.sha256(f"{_SUFFIX}\0{sys.version}\0{group.name}".encode())
    stats = []
    for name, path in named:
        st = os.stat(path)
        stats.append(st)
        seen.update(f"\0{name}\0{path}\0{st.st_size}:{st.st_mtime_ns}:{st.st_ctime_ns}:{st.st_ino}".encode())
    base = cache_dir(environ) / "native"
    memo = base / f"{group.name}.keys"
    stat_key = seen.hexdigest()
    try:
        known = dict(line.split(" ", 1) for line in memo.read_text().splitlines() if line.count(" ") == 1)
    except (OSError, UnicodeDecodeError):
        known = {}
    key = known.get(stat_key)
    if key is None or len(key) != 20 or not key.isalnum():
        key = _content_key([path for _, path in named[1:]], group)
        # Remembered once built (a run without a build writes nothing) and once the fields can be trusted.
        if (base / f"{group.name}-{key}").is_dir() and _trusted(stats, time.time_ns()):
            kept = [f"{k} {v}" for k, v in known.items() if k != stat_key][-(_KEYS_KEPT - 1) :]
            _write_atomically(memo, "".join(f"{line}\n" for line in [*kept, f"{stat_key} {key}"]))
    return base / f"{group.name}-{key}"


def _content_key(sources: list[Path], group: Group) -> str:
    """The SHA-256 (its first 20 hex digits) of this module, the interpreter and ``sources`` (the group's modules,
    then those it reads, each with its name)."""
    h = hashlib.sha256()
    names = [*group.modules, *group.reads]
    parts = [Path(__file__).read_bytes(), _SUFFIX.encode(), sys.version.encode()]
    parts += [m.encode() + b"\0" + path.read_bytes() for m, path in zip(names, sources, strict=True)]
    for part in parts:
        h.update(len(part).to_bytes(8, "little"))
        h.update(part)
    return h.hexdigest()[:20]


def _write_atomically(path: Path, text: str) -> None:
    """``text`` into ``path`` (written beside it, 0600, and renamed into place, as the code cache's table is:
    forensics/runcache.py); nothing when it cannot be written.  ``O_EXCL``: a name left there (or planted) is not
    written through."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "w") as out:
            out.write(text)
        os.replace(tmp, path)
    except OSError:
        with contextlib.suppress(OSError):
            tmp.unlink()


#: ``kforensic dmesg``'s JSON document items (:mod:`forensics.report.dmesg_json`: each report's dict, its template,
#: where its floats are), installed by :mod:`forensics.report.dmesg` before any of its functions imports them and
#: built by :func:`forensics.pipelines.build.build_native`: declared here, below both (a pipeline imports no
#: renderer).  ``reads``: what it imports, directly or not, of the project's other modules (checked by
#: tests/forensics/report/test_dmesg_native.py).
DMESG_DOCUMENT = Group(
    name="kforensic_dmesg_document",
    modules=("forensics.report.dmesg_json",),
    seconds=10.0,
    what="the kernel log's JSON document items",
    reads=(
        "forensics.errors",
        "forensics.model",
        "forensics.quoting",
        "forensics.serialize",
        "forensics.types.causes",
        "forensics.types.deliberate",
        "forensics.types.dmesg",
        "forensics.units",
    ),
)


def _stamp(path: Path) -> str:
    """What the manifest says of a file: its size and modification time (nanoseconds)."""
    st = path.stat()
    return f"{st.st_size}:{st.st_mtime_ns}"


def _files(where: Path) -> dict[str, Path] | None:
    """The built modules by name, each checked against the manifest; None when any is missing or differs."""
    try:
        listed = (where / _MANIFEST).read_text().splitlines()
    except (OSError, UnicodeDecodeError):
        return None
    files: dict[str, Path] = {}
    for entry in listed:
        stamp, _, relative = entry.partition("  ")
        path = where / relative
        if not relative.endswith(_SUFFIX) or ".." in Path(relative).parts:
            return None
        try:
            if _stamp(path) != stamp:
                return None
        except OSError:
            return None
        files[relative[: -len(_SUFFIX)].replace("/", ".")] = path
    return files or None


class _Finder:
    """Gives the built extension module for each name of a group (and its runtime library); None for others."""

    def __init__(self, files: dict[str, Path]) -> None:
        self.files = files

    def find_spec(
        self, fullname: str, path: Sequence[str] | None, target: ModuleType | None = None
    ) -> importlib.machinery.ModuleSpec | None:
        found = self.files.get(fullname)
        if found is None:
            return None
        return importlib.util.spec_from_file_location(fullname, found)


_installed: dict[str, Path] = {}  # group name -> the directory its modules are loaded from


def install(group: Group, environ: dict[str, str] | os._Environ[str] = os.environ) -> bool:
    """Make ``group``'s modules import compiled when they are built for the current sources; whether they will.

    Called by the package's ``__init__`` before any of its modules is imported (a module imported already
    stays what it is).
    """
    if group.name in _installed:
        return True
    if switch(AOT_ENV, environ) is False:
        return False
    try:
        where = group_dir(group, environ)
    except (OSError, RuntimeError):  # no home directory, an unreadable source
        return False
    files = _files(where)
    if files is None or not set(group.modules) <= set(files) or any(m in sys.modules for m in group.modules):
        return False
    sys.meta_path.insert(0, _Finder(files))
    _installed[group.name] = where
    cachetrim.used(where)  # its directory's time: the files' times are what _files checks
    return True


def loaded() -> dict[str, Path]:
    """The groups this process loads compiled, by name (what a test asks to know which path ran)."""
    return dict(_installed)


#: Packages no compiled module imports, which mypy, run by mypyc, would analyse all the same: they are reached
#: through modules mypyc does not compile but type-checks, being imported on the way (detectors/dmesg/__init__.py
#: -> forensics.native -> forensics.jit imports numba and numpy in its functions; forensics/report/__init__.py ->
#: forensics.report.terminal imports rich).  Analysed, they were 615 of the dmesg group's 736 modules and 14 of its
#: 17.5 s of CPU before the C (2.5 of 4.4 s for the document's): the build's config file makes them ``Any``
#: (``follow_imports = skip``, their stubs too), and the C mypyc writes is the same bytes for both groups
#: (2026-12-06).  tests/detectors/dmesg/test_native.py checks that no module of a group, nor one it reads, imports
#: them: a module that did would be compiled against ``Any`` for their types.
NOT_ANALYSED = ("numba", "numpy", "rich", "markdown_it")

#: mypy's configuration for the build, given as its config file: also keeps a user's own (~/.config/mypy/config,
#: which mypy reads when the working directory has none) out of it.
_MYPY_CONFIG = (
    "[mypy]\nignore_missing_imports = True\n\n[mypy-{}]\nfollow_imports = skip\nfollow_imports_for_stubs = True\n"
)

#: What the build subprocess runs: mypyc's setuptools build of the given sources, its C files and objects in the
#: working directory, the extension modules in ``--build-lib`` (not beside the sources).
#: At its end the objects of mypy's analysis (~2.6 million before :data:`NOT_ANALYSED`) are frozen out of the
#: garbage collector: freed at the process's exit under its collections, they took 9 of the build's 19 s of CPU
#: (dmesg's modules, tcc, 2026-12-06).
_BUILD = """
import gc, sys
from setuptools import setup
from mypyc.build import mypycify
name, out, opt, config, sources = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4], sys.argv[5:]
setup(
    name=name,
    ext_modules=mypycify(["--config-file", config, *sources], group_name=name, debug_level="0", opt_level=opt),
    script_args=["build_ext", "--build-lib", out, "--build-temp", "objects"],
)
gc.freeze()
"""


def build(group: Group, announce: bool = True, opt_level: str = "3") -> Path | None:
    """Compile ``group`` (announced with its expected time); the directory, None when it could not be built.

    ``opt_level`` is the C compiler's (mypyc's ``opt_level``): the tests build at "0", which compiles the same
    generated C (the same semantics) in 56 s of CPU instead of 88 s here, to keep ``make test`` within 5 min.

    Built in a temporary directory beside the final one and renamed into place with its manifest, so that a
    concurrent run never loads half a build.
    """
    import shutil
    import subprocess
    import tempfile
    import time

    try:
        where = group_dir(group)  # NoHomeError (an OSError): nowhere to keep a build
        if _files(where) is not None:
            return where
        where.parent.mkdir(parents=True, exist_ok=True)
    except OSError:
        return None
    if announce:
        print(
            f"kforensic: compiling {group.what} to C for this interpreter (once per install; about "
            f"{group.seconds:.0f} s on 2 cores), kept in {where.parent}",
            file=sys.stderr,
            flush=True,
        )
    start = time.perf_counter()
    with tempfile.TemporaryDirectory(dir=where.parent) as tmp:
        out = Path(tmp) / "out"
        sources = [str(_source(m)) for m in group.modules]
        config = Path(tmp) / "mypy.ini"
        config.write_text(_MYPY_CONFIG.format(",".join(f"{p},{p}.*" for p in NOT_ANALYSED)))
        done = subprocess.run(
            [sys.executable, "-c", _BUILD, group.name, str(out), opt_level, str(config), *sources],
            cwd=tmp,
            capture_output=True,
            text=True,
            check=False,
        )
        built = sorted(p for p in out.rglob(f"*{_SUFFIX}")) if done.returncode == 0 else []
        if not built:
            reason = (done.stderr or done.stdout).strip().splitlines()[-1:] or ["no module built"]
            print(
                f"kforensic: could not compile {group.what} ({reason[0][:200]}); the Python source runs instead",
                file=sys.stderr,
                flush=True,
            )
            return None
        for path in built:  # on disk before the manifest that vouches for them (a crash leaves no empty file)
            with open(path, "rb+") as f:
                os.fsync(f.fileno())
        lines = [f"{_stamp(p)}  {p.relative_to(out).as_posix()}" for p in built]
        (out / _MANIFEST).write_text("\n".join(lines) + "\n")
        try:
            os.rename(out, where)
        except OSError:  # built meanwhile by another run: that one is kept
            if _files(where) is None:
                shutil.rmtree(where, ignore_errors=True)
                os.rename(out, where)
    if announce:
        print(f"kforensic: built in {time.perf_counter() - start:.0f} s", file=sys.stderr, flush=True)
    cachetrim.trim(where.parent.parent, keep=[where])  # builds of other sources no run used for a month
    return where
