"""The one place numba is set up: where compiled code is cached, and the notice while a compile runs.

Every compiled module (the trace scanner, the scheduling engine, the CTF
decoder, ...) decorates its kernels with :func:`njit` / :func:`inline` from
here instead of ``numba.njit``, so that:

* the machine code is cached per user, outside the install:
  ``$NUMBA_CACHE_DIR`` when set, else ``$XDG_CACHE_HOME/kforensic/numba``
  (``~/.cache/kforensic/numba``).  A read-only install (a system
  site-packages, a container image) caches as well as a checkout, and two
  users never share (or overwrite) each other's files.  numba keys each
  entry on the source file's path and content, so checkouts side by side
  and upgrades do not mix.  When no cache directory can be made, numba
  falls back to ``__pycache__`` beside the source or compiles every run;
* a compile that takes long says so on stderr before it starts, with the
  time it is expected to take (``seconds=`` of the decorator, measured on a
  2-core machine) and where the result is kept; a kernel loaded from the
  cache prints nothing.

numba reads the cache directory when a kernel is decorated, so this module
sets it when the first kernel is decorated through it (numba is imported then,
not before: a small input never imports it).
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import os
import sys
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any, TypeVar, cast

from forensics.userdirs import cache_home

F = TypeVar("F", bound=Callable[..., Any])

NOTICE_MIN_SECONDS = 2.0  # compiles expected to take less than this run without a notice


def cache_dir(environ: dict[str, str] | os._Environ[str] = os.environ) -> Path:
    """Where compiled code is cached for this user (see the module docstring); :class:`NoHomeError` where there is
    no such place."""
    given = environ.get("NUMBA_CACHE_DIR")
    if given:
        return Path(given)
    return cache_home(environ) / "kforensic" / "numba"  # NoHomeError (an OSError) for a user without a home


#: The directories whose modules the kernels read constants and layouts from (engine_layout's column numbers,
#: rules' thresholds, the trace kinds...), besides their own source file.
_KEYED_SOURCES = ("collectors", "collectors/ctf", "detectors/sched", "forensics/types")


def jit_cache_dir(environ: dict[str, str] | os._Environ[str] = os.environ) -> Path:
    """numba's cache directory: :func:`cache_dir` / ``jit-<key>``, the key over the sources the kernels read.

    numba keys a cached kernel on its own source file's time stamp and size only: the module-level constants it
    was compiled with, imported from other files, are not part of it.  A change to
    detectors/sched/engine_layout.py alone (2026-12-05) left the engine's cached kernels writing one column past
    the end of the task table, and the ahead-of-time build reused them under its new key.  Keyed on those
    files' contents, a changed source (an upgrade, a checkout) compiles into a directory of its own.
    """
    return cache_dir(environ) / f"jit-{_sources_key()}"


@functools.cache
def _sources_key() -> str:
    return sources_key(Path(__file__).resolve().parent.parent)


def sources_key(root: Path) -> str:
    """The key of :func:`jit_cache_dir` for the checkout or install at ``root``."""
    digest = hashlib.sha256((root / "forensics" / "jit.py").read_bytes())
    for directory in _KEYED_SOURCES:
        for path in sorted((root / directory).glob("*.py")):
            digest.update(f"{directory}/{path.name}\0{path.stat().st_size}\0".encode())
            digest.update(path.read_bytes())
    return digest.hexdigest()[:16]


quiet = False  # True while forensics.aot builds (its own notice covers the compiles it causes)
_expected: dict[object, tuple[str, float]] = {}  # python function -> (what it is, seconds to compile)
_uncached = False  # True when the user has no home (forensics.userdirs): kernels compiled every run, kept nowhere
_numba: Any = None  # numba, once set up (:func:`_setup`): importing it costs 0.5 s, small inputs never do


def import_numpy() -> None:
    """Import numpy with OpenBLAS asked for no thread pool (a user's own setting stays).

    Nothing of kforensic calls BLAS, and the pool's threads cost CPU time from the moment numpy is
    loaded: measured 30-50 ms of CPU per run on a 2-core machine.  The variable is removed again once
    numpy is loaded (OpenBLAS reads it then), so child processes do not inherit it.  Nothing when numpy
    is loaded already.
    """
    if "numpy" in sys.modules or "OPENBLAS_NUM_THREADS" in os.environ:
        return
    os.environ["OPENBLAS_NUM_THREADS"] = "1"
    try:
        import numpy  # noqa: F401
    finally:
        del os.environ["OPENBLAS_NUM_THREADS"]


_BLAS = "scipy.linalg.cython_blas"


def _load_numba_target(numba: Any) -> None:
    """Load numba's implementations now, without the BLAS check that imports SciPy's linear algebra.

    numba loads them at the first compile or cache load of a process, and on the way checks for a
    BLAS by importing ``scipy.linalg`` (85 SciPy modules and a second OpenBLAS thread pool: 0.15-0.2 s
    of CPU measured, a fifth of a warm run's start-up).  No kernel of kforensic does linear algebra.
    With the module marked missing for the check, numba notes "no BLAS" (it then computes a 1-D dot
    product with a loop; the rest of its linear algebra imports SciPy when a kernel uses it).
    """
    if _BLAS in sys.modules:  # SciPy's BLAS is loaded already: nothing to save
        numba.core.registry.cpu_target.target_context.refresh()
        return
    sys.modules[_BLAS] = None  # type: ignore[assignment]  # "import" raises ImportError
    try:
        numba.core.registry.cpu_target.target_context.refresh()
    finally:
        if sys.modules.get(_BLAS, 0) is None:
            del sys.modules[_BLAS]


def _stamp_or_trim(where: Path) -> None:
    """Stamp this sources' JIT directory as used; when it is new (an upgrade, a checkout), numba is about to compile
    into it: the directories of other sources no run used for a month go (:mod:`forensics.cachetrim`)."""
    from forensics import cachetrim

    try:
        new = not where.is_dir()
    except OSError:  # a cache this user cannot search: numba's own fallbacks decide what happens
        return
    if new:
        cachetrim.trim(where.parent, keep=[where])
    else:
        cachetrim.used(where)


def _setup() -> Any:
    """Import numba, point its cache at :func:`cache_dir` and listen for compiles (once); numba."""
    global _numba  # noqa: PLW0603 (set once, on the first kernel)
    if _numba is not None:
        return _numba
    import_numpy()
    import numba
    import numba.core.registry
    from numba.core import event

    config: Any = numba.config  # numba has no type information
    global _uncached  # noqa: PLW0603 (set once, with _numba)
    try:
        where = jit_cache_dir()
        config.CACHE_DIR = str(where)
    except OSError:  # no home: numba's user-wide fallback would expand "~" into the current directory
        _uncached = True
    else:
        _stamp_or_trim(where)
    _load_numba_target(numba)

    import threading  # (here, with numba: ~0.5 ms of every start-up that compiles nothing)

    class Notice(event.Listener):
        """Prints one line on stderr when a kernel with an expected compile time starts compiling."""

        def __init__(self) -> None:
            self.depth = threading.local()

        def on_start(self, ev: Any) -> None:
            depth = getattr(self.depth, "n", 0)
            self.depth.n = depth + 1
            if depth:  # a helper compiled while its caller compiles: the caller's notice covers it
                return
            dispatcher = ev.data.get("dispatcher") if isinstance(ev.data, dict) else None
            found = _expected.get(getattr(dispatcher, "py_func", None))
            if found is None or found[1] < NOTICE_MIN_SECONDS or quiet:
                return
            what, seconds = found
            kept = (
                f"once per install; about {seconds:.0f} s on 2 cores), cached in "
                f"{config.CACHE_DIR or 'numba default location'}"
                if not _uncached
                else f"about {seconds:.0f} s on 2 cores; at every run: no home directory to cache it in, set "
                "XDG_CACHE_HOME)"
            )
            print(f"kforensic: compiling {what} for this machine ({kept}", file=sys.stderr, flush=True)

        def on_end(self, ev: Any) -> None:
            self.depth.n = max(0, getattr(self.depth, "n", 1) - 1)

    event.register("numba:compile", Notice())  # type: ignore[no-untyped-call]
    _numba = numba
    return numba


def njit(what: str = "", seconds: float = 0.0, **options: Any) -> Callable[[F], F]:
    """``numba.njit(cache=True, nogil=True, **options)``; a compile expected to take ``seconds`` is announced.

    ``what`` names the kernel for the user ("the trace analysis"); ``seconds`` is its measured compile
    time (announced from :data:`NOTICE_MIN_SECONDS` up).
    """

    def wrap(fn: F) -> F:
        if what:
            _expected[fn] = (what, seconds)
        return _compiled(fn, **options)

    return wrap


def _compiled(fn: F, **options: Any) -> F:
    """``fn`` compiled with a cache, or without one when numba finds nowhere to keep it.

    numba raises RuntimeError ("no locator available") at decoration when neither the cache directory nor
    ``__pycache__`` beside the source can be written: a user without a home (nobody, a service account)
    running a read-only install. The run then compiles every time instead of failing (exit 4).  A user with no
    home at all (:mod:`forensics.userdirs`) is not offered to numba's cache: its user-wide fallback would expand
    "~" into the current directory.
    """
    numba = _setup()
    if not _uncached:
        with contextlib.suppress(RuntimeError):
            return cast(F, numba.njit(cache=True, nogil=True, **options)(fn))
    return cast(F, numba.njit(nogil=True, **options)(fn))


def word_intrinsics() -> tuple[Any, Any]:
    """Two numba intrinsics for byte scanners: ``word(buf, i)`` and ``borrowed(array)``.

    ``word(buf, i)``: the 8 bytes of the uint8 array ``buf`` from ``i`` as a little-endian uint64, an
    unaligned load with no bounds check (the caller keeps ``i + 8 <= len(buf)``): texts compared and
    bytes looked for 8 at a time.

    ``borrowed(a)``: the array ``a`` without its reference count (a null meminfo), valid while ``a``
    is.  numba counts references to every array passed to a compiled helper that LLVM does not inline,
    with an atomic increment and decrement per call; a scanner passing its buffer to a helper per field
    spent 5 % of a run's CPU time on them.  Only for arrays that live longer than the kernel's call.
    """
    _setup()
    from numba.core import cgutils, types
    from numba.extending import intrinsic

    @intrinsic
    def word(typingctx: Any, buf: Any, i: Any) -> Any:
        if not (isinstance(buf, types.Array) and buf.dtype == types.uint8 and isinstance(i, types.Integer)):
            return None

        def codegen(context: Any, builder: Any, sig: Any, args: Any) -> Any:
            ary = context.make_array(sig.args[0])(context, builder, args[0])
            index = context.cast(builder, args[1], sig.args[1], types.intp)
            at = builder.bitcast(builder.gep(ary.data, [index]), context.get_value_type(types.uint64).as_pointer())
            return builder.load(at, align=1)

        return types.uint64(buf, i), codegen

    @intrinsic
    def borrowed(typingctx: Any, arr: Any) -> Any:
        if not isinstance(arr, types.Array):
            return None

        def codegen(context: Any, builder: Any, sig: Any, args: Any) -> Any:
            src = context.make_array(sig.args[0])(context, builder, args[0])
            dst = context.make_array(sig.return_type)(context, builder)
            for field in ("nitems", "itemsize", "data", "shape", "strides"):
                setattr(dst, field, getattr(src, field))
            null: Any = cgutils.get_null_value
            dst.meminfo = null(dst.meminfo.type)
            dst.parent = null(dst.parent.type)
            return dst._getvalue()

        return arr(arr), codegen

    return word, borrowed


def inline(fn: F) -> F:
    """A helper that numba inlines into its compiled callers (``inline="always"``).

    Measure before using it: in the trace scanner it changed nothing in speed but multiplied the first
    compile by 10 in time and 17 in memory (collectors/trace_scan.py); plain :func:`compiled` helpers are
    the default.
    """
    return _compiled(fn, inline="always")


def compiled(fn: F) -> F:
    """A small helper compiled and cached like the kernels (``njit()`` without a notice)."""
    return njit()(fn)


#: Inputs below this much trace text are read and analysed without compiled code: the line parser and
#: the reference analysis take about 0.2 s per SMALL_INPUT_BYTES (measured), loading compiled code alone more.
SMALL_INPUT_BYTES = 10_000_000
#: While the compiled code is not in the cache, inputs below this run without it too rather than wait for
#: the compile: without it 87 MB take 7 s of CPU, 873 MB about 70 s, while the compile alone takes minutes
#: and gigabytes of memory (docs/trace.md, "First run").  Larger inputs compile (announced).
COLD_INPUT_BYTES = 2_000_000_000
COMPILED_ENV = "KFORENSIC_COMPILED"  # "auto" (default), "yes" (always compiled), "no" (never)
AOT_ENV = "KFORENSIC_AOT"  # "no": never load or build code compiled ahead of time (forensics.aot, forensics.native)


def switch(name: str, environ: dict[str, str] | os._Environ[str] = os.environ) -> bool | None:
    """An environment switch: True for yes/1/true, False for no/0/false, None (automatic) for anything else."""
    value = environ.get(name, "").strip().lower()
    return True if value in {"yes", "1", "true"} else False if value in {"no", "0", "false"} else None


BUILD_HINT = "python -m forensics.pipelines.build"  # compiles every kernel into the cache once


def is_cached(kernels: Iterable[Any]) -> bool:
    """True when every kernel (a numba dispatcher) has machine code in the cache for its current source."""
    try:
        return all(bool(k._cache._cache_file._load_index()) for k in kernels)
    except (AttributeError, OSError, EOFError, ValueError):  # numba's internals moved, or a damaged index
        return False


def nothing_cached(environ: dict[str, str] | os._Environ[str] = os.environ) -> bool:
    """True when the cache numba would use (:func:`cache_dir`) certainly holds no compiled code: no index file
    in it, and numba can write it (else it falls back to ``__pycache__``).  Told without importing numba
    (0.3 s of CPU and 110 MB of peak RSS, which a first run without compiled code then never pays)."""
    try:
        d = jit_cache_dir(environ)
    except OSError:  # NoHomeError: no cache at all (kernels would be compiled at every run), so nothing in it
        return True
    try:
        if d.is_dir():
            return os.access(d, os.W_OK) and next(d.rglob("*.nbi"), None) is None
        parent = d.parent
        while not parent.exists():  # numba makes the missing directories at its first compile
            parent = parent.parent
        return os.access(parent, os.W_OK)
    except OSError:  # cannot tell: numba's own check decides
        return False


def compiled_pays(
    text_bytes: int | None,
    kernels: Callable[[], Iterable[Any]] | None = None,
    environ: dict[str, str] | os._Environ[str] = os.environ,
    cold_bytes: int = COLD_INPUT_BYTES,
    built: Callable[[], bool] | None = None,
) -> bool:
    """True when an input of about ``text_bytes`` of trace text (None: unknown) should run compiled code.

    ``$KFORENSIC_COMPILED`` forces it (``yes``/``no``).  By default inputs under
    :data:`SMALL_INPUT_BYTES` run without; larger ones run compiled when ``kernels()`` (imported only
    then) are in the cache or ``built()`` says its kernels compiled ahead of time are (:mod:`forensics.aot`,
    told without numba), or when the input is too large (``cold_bytes``, by default
    :data:`COLD_INPUT_BYTES`) to be worth reading without: a compile is announced (:func:`njit`).
    """
    forced = switch(COMPILED_ENV, environ)
    if forced is not None:
        return forced
    if text_bytes is not None and text_bytes < SMALL_INPUT_BYTES:
        return False
    if built is not None and built():
        return True
    if kernels is None or (not nothing_cached(environ) and is_cached(kernels())):
        return True
    if text_bytes is not None and text_bytes < cold_bytes:
        print(
            f"kforensic: analysing without compiled code (not built for this install yet; `{BUILD_HINT}` "
            "builds it once, then inputs this large run about 4x faster)",
            file=sys.stderr,
            flush=True,
        )
        return False
    return True
