"""The scheduling engine's kernels compiled ahead of time (:mod:`forensics.aot`): run without numba loaded.

The same functions as :mod:`detectors.sched.engine_kernels` (``run_batch``, ``new_maps``,
``state_refs``: their Python source, compiled by numba's ``pycc`` for the argument types the engine
passes), but for the typed dicts of the state: a compiled module cannot hand a numba ``Dict`` to Python
without numba, so ``new_maps`` returns each dict as a handle (its address, counted as a reference) and
the other kernels take handles where the JIT ones take dicts; ``free`` gives them back.  Python never
reads the dicts, it only passes them on (:class:`detectors.sched.engine._Tables`).
"""

from __future__ import annotations

from typing import Any

from forensics.aot import Export, Group, Kernels, ensure, load

_MAPS = 9  # the typed dicts of engine_kernels.new_maps, in its order
_A1, _A2, _A3 = "i8:1", "i8:2", "i8:3"
_F1, _F2, _F3 = "f8:1", "f8:2", "f8:3"
# run_batch's arguments as the engine passes them (FastAnalyzer.feed, _Tables.args): batch columns, then the state.
_RUN_BATCH = (
    ("i8", "i8")
    + (_A1, _F1, _A1, _A1, _A1, _A1, _A1, _A1, _A1)
    + (_F1, _A1, _A2, _F2, _A3, _F2, _A3, _F3, _A2, _A1)
    + ("h",) * _MAPS
    + ("i4:1", _A2, _F2, _A3, _F2, _A1, _A2, _A2, _F2, _A2, _A2, _A2, _F2, _A3, _F2, _A1, _A3, _F3)
    + (_A2, _F2, "i4:2", _A2, _A2, _F2, _A2, _F2)
)


class AotEngine:
    """What :class:`detectors.sched.engine.FastAnalyzer` calls, from the module built ahead of time."""

    def __init__(self, found: Kernels) -> None:
        k: Any = found
        self.run_batch = k.run_batch
        self.state_refs = k.state_refs
        self._new_maps = k.new_maps
        self._release = k.release

    def new_maps(self) -> tuple[int, ...]:
        """The state's typed dicts, as handles."""
        return tuple(self._new_maps())

    def free(self, maps: tuple[int, ...]) -> None:
        """Give back the dicts of :meth:`new_maps` (once, when the tables go)."""
        for h in maps:
            self._release(h)


def kernels(build: bool = False) -> AotEngine | None:
    """The engine's kernels built ahead of time (built now when ``build`` and not built yet); None without."""
    found = ensure(GROUP) if build else load(GROUP)
    return AotEngine(found) if found is not None else None


def functions() -> dict[str, Any]:
    """The exported functions, for :func:`forensics.aot.build` (imports numba)."""
    import numba.extending
    from llvmlite import ir  # type: ignore[import-untyped]
    from numba.core import cgutils as numba_cgutils
    from numba.core import types as numba_types

    # numba has no type information
    cgutils: Any = numba_cgutils
    types: Any = numba_types
    intrinsic: Any = numba.extending.intrinsic

    from detectors.sched import engine_kernels as k

    dict_types = [types.DictType(*kv) for kv in _map_types(types)]

    def to_handle(typingctx: Any, d: Any) -> Any:
        """A typed dict's meminfo address (one more reference: the handle owns one)."""

        def codegen(context: Any, builder: Any, sig: Any, args: Any) -> Any:
            context.nrt.incref(builder, sig.args[0], args[0])
            st = cgutils.create_struct_proxy(sig.args[0])(context, builder, value=args[0])
            return builder.ptrtoint(st.meminfo, ir.IntType(64))

        return types.int64(d), codegen

    def from_handle(typingctx: Any, h: Any, ref: Any) -> Any:
        """The typed dict of a handle (borrowed: the handle keeps its reference)."""
        td = ref.instance_type

        def codegen(context: Any, builder: Any, sig: Any, args: Any) -> Any:
            mi = builder.inttoptr(args[0], cgutils.voidptr_t)
            st = cgutils.create_struct_proxy(td)(context, builder)
            data = builder.bitcast(context.nrt.meminfo_data(builder, mi), cgutils.voidptr_t.as_pointer())
            st.data = builder.load(data)
            st.meminfo = mi
            context.nrt.incref(builder, td, st._getvalue())  # the caller's reference, dropped when it is done
            return st._getvalue()

        return td(h, ref), codegen

    def release(typingctx: Any, h: Any) -> Any:
        """Drop the reference a handle owns."""

        def codegen(context: Any, builder: Any, sig: Any, args: Any) -> Any:
            mi = builder.inttoptr(args[0], cgutils.voidptr_t)
            context.nrt.decref(builder, types.MemInfoPointer(types.voidptr), mi)
            return context.get_dummy_value()

        return types.none(h), codegen

    names = [f"a{i}" for i in range(len(_RUN_BATCH))]
    first_map = _RUN_BATCH.index("h")
    passed = [
        f"from_handle({n}, D{i - first_map})" if first_map <= i < first_map + _MAPS else n for i, n in enumerate(names)
    ]
    env: dict[str, Any] = {f"D{i}": t for i, t in enumerate(dict_types)}
    env.update(from_handle=intrinsic(from_handle), to_handle=intrinsic(to_handle), release=intrinsic(release), k=k)
    source = f"""
def run_batch({", ".join(names)}):
    return k.run_batch({", ".join(passed)})

def new_maps():
    m = k.new_maps()
    return ({", ".join(f"to_handle(m[{i}])" for i in range(_MAPS))})

def state_refs(si, ci, stk_i, ti, oi, raised_eid, work_cur, ow_i):
    return k.state_refs(si, ci, stk_i, ti, oi, raised_eid, from_handle(work_cur, D5), ow_i)

def release_handle(h):
    release(h)
"""
    exec(compile(source, "<engine_aot>", "exec"), env)
    return {
        "run_batch": env["run_batch"],
        "new_maps": env["new_maps"],
        "state_refs": env["state_refs"],
        "release": env["release_handle"],
    }


def _map_types(types: Any) -> list[tuple[Any, Any]]:
    """(key, value) types of the dicts of ``engine_kernels.new_maps``, in its order."""
    i64 = types.int64
    pair = types.UniTuple(i64, 2)
    start = types.Tuple((i64, types.float64, i64))
    return [
        (i64, i64),
        (i64, i64),
        (pair, i64),
        (i64, i64),
        (i64, i64),
        (pair, start),
        (i64, i64),
        (pair, i64),
        (pair, i64),
    ]


GROUP = Group(
    name="kforensic_sched_engine",
    exports=(
        Export("new_maps", (), "(" + ",".join(["i8"] * _MAPS) + ")"),
        Export("run_batch", _RUN_BATCH, "(i8,i8)"),
        Export("state_refs", (_A1, _A2, _A3, _A2, _A2, _A2, "h", _A3), "i8:1"),
        Export("release", ("h",), "none"),
    ),
    functions=functions,
    sources=(
        "detectors.sched.engine_aot",
        "detectors.sched.engine_kernels",
        "detectors.sched.engine_layout",
        "detectors.sched.rules",
    ),
    seconds=30.0,
    what="the scheduling analysis",
)
