"""Kernels compiled ahead of time: machine code loaded without numba (``numba.pycc``), per user.

Why: a process that imports numba carries LLVM and numba's registries, about 150 MB resident
before it reads a byte (docs/trace.md, "Peak RSS"), four times babeltrace2's whole run.  A
:class:`Group` names kernels of one module with explicit argument types; :func:`build` compiles them
once into a C extension module (numba's ``pycc``: a C compiler and Python's headers are needed, on
Debian ``gcc`` and ``python3-dev``), :func:`load` imports it from its path without importing numba.

Where: ``cache_dir()/aot`` of :mod:`forensics.jit` (per user, outside the install: a read-only
install works).  The file name carries a key over the sources the kernels are compiled from, numpy's
version and this CPU (the code is built for the host CPU, as numba's JIT does), so a changed source
is built again and a stale module is never loaded; a ``.sha256`` note beside each module keeps a damaged
one (cut short, changed) from being loaded (:func:`_intact`).  A build that failed leaves a ``.failed`` note:
later runs use the JIT path without trying again until a source changes.

Calls are checked (:class:`Kernels`): a compiled module reads its arguments as the types it was built
for without asking (an ``int32`` array read as ``int64`` would be garbage), so each call compares the
arrays' dtype, dimensions, contiguity and writability with the group's types first; a call that does not
match goes to the JIT function instead (the same results, numba imported then), or raises when the
group has none (its handles mean nothing to numba).
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib.util
import os
import sys
import sysconfig
import tempfile
import time
import warnings
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from forensics import cachetrim
from forensics.jit import AOT_ENV, cache_dir, import_numpy, switch

#: The argument and result types, in a notation that needs no numba: ``i8``, ``f8`` (scalars), ``h``
#: (a handle: an int64 the kernels made, e.g. a typed dict's address), ``DT:N`` (a C-contiguous
#: N-dimensional array of dtype DT, written to), ``DT:N:r`` (read only: may be a read-only mapping),
#: ``none`` and ``(T, T, ...)`` (results).
Spec = str
_SCALARS = {"i8": "int64", "f8": "float64", "h": "int64", "i4": "int32", "u1": "uint8", "u8": "uint64", "none": "none"}


@dataclass(frozen=True)
class Export:
    """One exported kernel: its name, argument types and result type (see :data:`Spec`)."""

    name: str
    args: tuple[Spec, ...]
    result: Spec


@dataclass(frozen=True)
class Group:
    """Kernels built into one extension module.

    ``functions()`` returns ``{name: python function}`` for the exports (called only to build: it imports
    numba); ``jit()`` the module holding the JIT kernels of the same names, for calls whose types do not
    match (None: no such module); ``sources`` the modules whose files key the build; ``seconds`` the
    expected build time on 2 cores (announced on stderr).
    """

    name: str
    exports: tuple[Export, ...]
    functions: Callable[[], dict[str, Any]]
    sources: tuple[str, ...]
    seconds: float
    jit: Callable[[], Any] | None = None
    what: str = field(default="")


def _source_bytes(module: str) -> bytes:
    spec = importlib.util.find_spec(module)
    if spec is None or spec.origin is None:
        return module.encode()
    return Path(spec.origin).read_bytes()


def _cpu() -> bytes:
    """This CPU's model and flags (the code is built for it), told without LLVM."""
    try:
        with open("/proc/cpuinfo", "rb") as f:
            head = f.read(1 << 14).split(b"\n\n", 1)[0]
        return b"\n".join(ln for ln in head.splitlines() if ln.startswith((b"model name", b"flags")))
    except OSError:
        return os.uname().machine.encode()


def module_path(group: Group, environ: dict[str, str] | os._Environ[str] = os.environ) -> Path:
    """Where ``group``'s module is (or would be) for the current sources."""
    import numpy

    h = hashlib.sha256()
    for part in (_source_bytes(__name__), *map(_source_bytes, group.sources), numpy.__version__.encode(), _cpu()):
        h.update(len(part).to_bytes(8, "little"))
        h.update(part)
    suffix = sysconfig.get_config_var("EXT_SUFFIX") or ".so"
    return cache_dir(environ) / "aot" / f"{group.name}-{h.hexdigest()[:20]}{suffix}"


def _dtype(spec: Spec) -> Any:
    import numpy as np

    return np.dtype(_SCALARS[spec])


def _checks(export: Export) -> list[tuple[int, Any, int, bool]]:
    """Per array argument: (index, dtype, dimensions, must be writable)."""
    out = []
    for i, spec in enumerate(export.args):
        parts = spec.split(":")
        if len(parts) > 1:
            out.append((i, _dtype(parts[0]), int(parts[1]), parts[2:] != ["r"]))
    return out


class Kernels:
    """The kernels of a loaded module, each call checked against its types (see the module docstring)."""

    def __init__(self, group: Group, module: Any) -> None:
        self.group = group
        self.module = module
        for export in group.exports:
            setattr(self, export.name, self._checked(export, getattr(module, export.name)))

    def _checked(self, export: Export, fn: Callable[..., Any]) -> Callable[..., Any]:
        import numpy as np

        arrays = _checks(export)
        nargs = len(export.args)
        ndarray = np.ndarray
        group = self.group

        def call(*args: Any) -> Any:
            ok = len(args) == nargs
            for i, dtype, ndim, writable in arrays if ok else ():
                a = args[i]
                flags = getattr(a, "flags", None)
                if not (
                    type(a) is ndarray
                    and a.dtype == dtype
                    and a.ndim == ndim
                    and flags is not None
                    and flags.c_contiguous
                    and flags.aligned
                    and (flags.writeable or not writable)
                ):
                    ok = False
                    break
            if ok:
                return fn(*args)
            if group.jit is None:
                raise TypeError(f"{group.name}.{export.name}: arguments not of the types it was built for")
            return getattr(group.jit(), export.name)(*args)

        call.__name__ = export.name
        call.__doc__ = f"{group.name}.{export.name}, compiled ahead of time (forensics.aot)"
        return call


_loaded: dict[Path, Kernels] = {}


def load(group: Group, environ: dict[str, str] | os._Environ[str] = os.environ) -> Kernels | None:
    """``group``'s module built for the current sources, imported without numba; None when not built."""
    if switch(AOT_ENV, environ) is False:  # never load or build ahead-of-time code (numba's JIT runs, as before it)
        return None
    import_numpy()
    try:
        path = module_path(group, environ)
    except (OSError, RuntimeError):  # no home directory, an unreadable source
        return None
    if path in _loaded:
        return _loaded[path]
    try:
        if not path.is_file() or not _intact(path):
            return None
    except OSError:  # a cache this user cannot search: the JIT path runs
        return None
    spec = importlib.util.spec_from_file_location(group.name, path)
    if spec is None or spec.loader is None:
        return None
    try:
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
    except (ImportError, OSError):  # damaged or built for another interpreter: the JIT path runs
        return None
    _loaded[path] = found = Kernels(group, module)
    cachetrim.used(_digest_path(path))  # the note's time: the module's own file is what _intact reads
    return found


def loaded() -> list[Path]:
    """The modules this process loaded (what a test asks to know which path ran)."""
    return list(_loaded)


def failed(group: Group, environ: dict[str, str] | os._Environ[str] = os.environ) -> bool:
    """True when a build of the current sources failed before (the note :func:`build` leaves)."""
    with contextlib.suppress(OSError, RuntimeError):
        note = module_path(group, environ).with_suffix(".failed")
        if note.exists():
            cachetrim.used(note)  # still the answer for these sources: not a month-old leftover to trim
            return True
        return False
    return True


def _digest_path(path: Path) -> Path:
    """Where the sha256 of the module at ``path`` is kept (written by :func:`_compile` before the module)."""
    return path.with_suffix(".sha256")


def _sha256(path: Path) -> str:
    with open(path, "rb") as f:
        return hashlib.file_digest(f, "sha256").hexdigest()


def _intact(path: Path) -> bool:
    """True when the module at ``path`` is the file its build wrote (its sha256 as noted beside it).

    A damaged module (cut short by a full disk or a crash of the machine, overwritten by hand) must not be
    loaded: the dynamic loader maps it, and a file shorter than its headers say ends the process with SIGBUS
    at the first page past its end (measured: exit 135 on every later run).  Unverifiable (no note, unreadable):
    not loaded; :func:`ensure` builds it again.  ~1 ms for a module of ~800 KB.
    """
    try:
        return _digest_path(path).read_text().strip() == _sha256(path)
    except (OSError, UnicodeDecodeError):
        return False


def _numba_type(spec: Spec) -> Any:
    from numba.core import types as numba_types

    types: Any = numba_types  # numba has no type information

    spec = spec.strip()
    if spec.startswith("("):
        items = [_numba_type(s) for s in spec[1:-1].split(",") if s.strip()]
        return types.Tuple(items) if len(set(items)) > 1 else types.UniTuple(items[0], len(items))
    parts = spec.split(":")
    scalar = getattr(types, _SCALARS[parts[0]])
    if len(parts) == 1:
        return scalar
    return types.Array(scalar, int(parts[1]), "C", readonly=parts[2:] == ["r"])


def build(group: Group, announce: bool = True) -> Path | None:
    """Compile ``group`` into its module (announced with its expected time); its path, None when it failed.

    Written to a temporary name and renamed, so a concurrent run never loads half a file; a failure
    (no compiler, no Python headers) is noted beside it with its reason and said on stderr once.
    """
    from forensics import jit

    try:
        path = module_path(group)  # NoHomeError (an OSError) for a user without a home
        path.parent.mkdir(parents=True, exist_ok=True)
    except OSError:  # nowhere to keep it (a read-only home, no home): numba's JIT and its own fallbacks run
        return None
    if announce:
        print(
            f"kforensic: compiling {group.what or group.name} ahead of time for this machine (once per install; "
            f"about {group.seconds:.0f} s on 2 cores), kept in {path.parent}",
            file=sys.stderr,
            flush=True,
        )
    start = time.perf_counter()
    import_numpy()
    jit.quiet = True  # the JIT kernels compiled on the way are part of this build, announced above
    try:
        _compile(group, path)
    except Exception as exc:
        with contextlib.suppress(OSError):
            path.with_suffix(".failed").write_text(f"{type(exc).__name__}: {exc}\n")
        print(
            f"kforensic: could not compile {group.what or group.name} ahead of time ({type(exc).__name__}: "
            f"{str(exc)[:200]}); numba compiles it at run time instead",
            file=sys.stderr,
            flush=True,
        )
        return None
    finally:
        jit.quiet = False
    if announce:
        print(f"kforensic: built in {time.perf_counter() - start:.0f} s", file=sys.stderr, flush=True)
    cachetrim.trim(path.parent.parent, keep=[path])  # modules of other sources no run used for a month
    return path


@contextlib.contextmanager
def _releasing_the_gil() -> Iterator[None]:
    """pycc's exports release the GIL while they run, as the JIT kernels do (``nogil=True``, forensics.jit).

    The LTTng decoder runs in a thread beside the analysis (collectors/ctf/feed.py): holding the GIL, it
    would stop the analysis while it decodes.  pycc has no option for it; it makes its compile flags with
    ``numba.pycc.compiler.Flags()``, so flags that release the GIL are given there while it compiles.
    """
    import numba.pycc.compiler

    compiler: Any = numba.pycc.compiler
    original = compiler.Flags

    class Flags(original):  # type: ignore[misc,valid-type]
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            self.release_gil = True

    compiler.Flags = Flags
    try:
        yield
    finally:
        compiler.Flags = original


def _compile(group: Group, path: Path) -> None:
    """numba's pycc on ``group``'s functions, for the host CPU, into ``path``."""
    functions = group.functions()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # numba.pycc is deprecated (still the way to run without numba)
        import numba.pycc
        from numba.core import types as numba_types

        types: Any = numba_types  # numba has no type information
        pycc: Any = numba.pycc

        with tempfile.TemporaryDirectory(dir=path.parent) as tmp:
            cc = pycc.CC(group.name)
            cc.output_dir = tmp
            cc.output_file = path.name
            cc.target_cpu = "host"  # as numba's JIT: the module is per user and keyed on this CPU (_cpu)
            for export in group.exports:
                sig = types.none if export.result == "none" else _numba_type(export.result)
                cc.export(export.name, sig(*map(_numba_type, export.args)))(functions[export.name])
            with _releasing_the_gil():
                cc.compile()
            built = Path(tmp) / path.name
            os.chmod(built, 0o755)
            note = Path(tmp) / _digest_path(path).name
            note.write_text(_sha256(built) + "\n")
            os.replace(note, _digest_path(path))  # the note first: a module in place is always checkable
            os.replace(built, path)


def ensure(group: Group) -> Kernels | None:
    """``group``'s kernels: loaded, or built now when no build of these sources failed before; None otherwise."""
    found = load(group)
    if found is not None or failed(group) or switch(AOT_ENV) is False:
        return found
    return load(group) if build(group) is not None else None
