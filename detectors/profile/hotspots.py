"""Hotspots of a CPU profile: self and total shares per symbol, DSO, thread, kernel vs user.

Pure: a :class:`collectors.perf_script.Profile` in, :class:`Hotspots` out.  Shares are of the
event's *period* (what ``perf report`` shows as Overhead); sample counts are kept beside them.
Only the first event of the input is summed (as ``perf report`` shows one event at a time and
``stackcollapse-perf.pl`` keeps the first), the others are counted in ``other_events``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from itertools import repeat
from operator import attrgetter, itemgetter
from typing import Any, NamedTuple

from detectors.profile.events import sampled_event
from forensics.types.profile import (
    INLINED_DSO,
    UNKNOWN_FRAME,
    VECTOR_FROM,
    CallPath,
    Hotspots,
    Profile,
    ProfileFrame,
    ProfileStack,
    Share,
    StackColumns,
    StackTable,
    Thread,
    frame_names,
    made_records,
    periods_by_command,
    stack_table,
)

_NAME = itemgetter(0)  # a ProfileFrame's name
_FIRST, _SECOND = itemgetter(0), itemgetter(1)
_FRAMES = attrgetter("frames")
_PERIOD = attrgetter("period")
_SAMPLES = attrgetter("samples")
_LINE = attrgetter("first_line")
_THREAD = attrgetter("thread")
_EVENT = attrgetter("event")
_NO_FRAMES = "[no frames]"
#: The per-DSO row of the samples perf script printed without a call chain: the text names no DSO for them
#: (``perf report --sort dso`` counts each in its ip's), so they are a row of their own, not left out of the table.
NO_FRAMES_DSO = "[no call chain: perf script printed no DSO]"


def selected_stacks(
    profile: Profile,
    comm: str | None = None,
    pid: int | None = None,
    tid: int | None = None,
    space: str | None = None,
    event: str | None = None,
) -> Sequence[ProfileStack]:
    """The stacks of one event (the first by default) that pass the thread filters, cut to one space.

    ``space`` "kernel" keeps kernel frames only, "user" user frames only (stacks left empty drop out).
    """
    out: list[ProfileStack] = []
    event = event or profile.first_event
    if comm is None and pid is None and tid is None and space is None:
        # No thread or space filter: the stacks as they are when all are of the event (or name none); the
        # reader's columns kept as they are (a stack made only when one is read).
        columns = profile.stacks if isinstance(profile.stacks, StackColumns) else None
        events = set(map(_EVENT, profile.stacks)) if columns is None else columns.events
        if event is None or events <= {event, ""}:
            return list(profile.stacks) if columns is None else columns
    for s in profile.stacks:
        if event is not None and s.event and s.event != event:
            continue
        if comm is not None and s.thread.comm != comm:
            continue
        if pid is not None and s.thread.pid != pid and not (s.thread.pid is None and s.thread.tid == pid):
            continue
        if tid is not None and s.thread.tid != tid:
            continue
        frames = s.frames
        if space == "kernel":
            frames = tuple(f for f in frames if f.kernel)
        elif space == "user":
            frames = tuple(f for f in frames if not f.kernel)
        if space is not None:
            if not frames:
                continue
            out.append(ProfileStack(s.thread, s.event, frames, s.samples, s.period, s.first_line, s.first_header))
        else:
            out.append(s)
    return out


def _leaf(frames: tuple[ProfileFrame, ...]) -> ProfileFrame | None:
    return frames[-1] if frames else None


def _rows(
    table: dict[str, list[int]], total: int, meta: dict[str, tuple[bool | None, str]] | None = None
) -> tuple[Share, ...]:
    """The rows of ``table`` (key -> [period, samples]), the largest period first, then by key.

    Sorted by key (C-level: the keys are distinct strings), then stably by period, largest first (the same
    order as by ``(-period, key)``); the rows made through C-level maps (:func:`made_records`).
    """
    items = sorted(table.items())
    values = list(map(_SECOND, items))
    periods = list(map(_FIRST, values))
    order = sorted(range(len(items)), key=periods.__getitem__, reverse=True)  # stable: equal periods keep key order
    keys = [items[i][0] for i in order]
    periods = list(map(periods.__getitem__, order))
    samples = [values[i][1] for i in order]
    shares = [100.0 * p / total if total else 0.0 for p in periods]
    got: list[tuple[bool | None, str]] = list(map((meta or {}).get, keys, repeat((False, ""))))
    return tuple(made_records(Share, len(keys), keys, periods, samples, shares, map(_FIRST, got), map(_SECOND, got)))


def _inlined_into_dsos(
    found: dict[str, str],
    inlined: dict[str, list[int]],
    dso_t: dict[str, list[int]],
    meta: dict[str, tuple[bool | None, str]],
) -> None:
    """Move the self time of frames perf script printed as ``(inlined)`` with no DSO (``inlined``: per name) to the
    DSO perf counts them in (``found``: :attr:`Profile.inlined_dsos`), in the per-DSO table and the self rows.

    Only the inlined frames' own time moves: a name may also be a frame with a DSO of its own (glibc inlines a
    ``futex_wait`` of its own; the kernel's ``futex_wait`` is another function of the same name), whose time stays
    where perf counted it."""
    left = dso_t.get(INLINED_DSO)
    if not found or left is None:
        return
    for name, dso in found.items():
        row = inlined.get(name)
        if row is None:
            continue
        got = meta.get(name)
        if got is not None and got[1] == INLINED_DSO:
            meta[name] = (got[0], dso)
        left[0] -= row[0]
        left[1] -= row[1]
        _add(dso_t, dso, row[0], row[1])
    if left[1] <= 0:
        del dso_t[INLINED_DSO]


def _add(table: dict[str, list[int]], key: str, period: int, samples: int) -> None:
    slot = table.get(key)
    if slot is None:
        table[key] = [period, samples]
    else:
        slot[0] += period
        slot[1] += samples


class _Tables(NamedTuple):
    """The sums of one pass over the stacks: totals, the tables by key, and the stacks of each self symbol."""

    total_period: int
    total_samples: int
    self_t: dict[str, list[int]]
    total_t: dict[str, list[int]]
    dso_t: dict[str, list[int]]
    thread_t: dict[str, list[int]]
    meta: dict[str, tuple[bool | None, str]]  # self symbol -> kernel, DSO of its first stack
    space: dict[str, list[int]]
    # Self time per name of the leaves perf script printed as "(inlined)" with no DSO (INLINED_DSO).
    inlined: dict[str, list[int]]
    # The call paths of a self symbol's stacks: names root to leaf -> [period, samples, first line, its header].
    paths_of: Callable[[str], dict[tuple[str, ...], list[Any]]]


#: How the per-thread table names the samples of tasks that exited before perf read their comm (perf: ``:-1``, -1).
EXITED_LABEL = ":-1/-1 (exited task, comm unknown)"


#: The idle tasks' label: every CPU's idle task is pid 0, which perf names "swapper" on all of them; "swapper/0" read
#: as CPU 0's idle task (the kernel's own name for it) while it was both CPUs' idle time.
IDLE_LABEL = "swapper/0 (idle: pid 0 of every CPU)"


def _label(th: Thread) -> str:
    if th.exited:
        return EXITED_LABEL
    if th.tid == 0:
        return IDLE_LABEL
    return th.comm + (f"/{th.tid}" if th.tid is not None else "")


def _tables_python(stacks: Sequence[ProfileStack]) -> _Tables:
    """:class:`_Tables` stack by stack (small profiles)."""
    self_t: dict[str, list[int]] = {}
    total_t: dict[str, list[int]] = {}
    dso_t: dict[str, list[int]] = {}
    thread_t: dict[str, list[int]] = {}
    meta: dict[str, tuple[bool | None, str]] = {}
    space = {"kernel": [0, 0], "user": [0, 0]}
    inlined: dict[str, list[int]] = {}
    total_period = 0
    total_samples = 0
    by_leaf: dict[str, list[ProfileStack]] = {}  # the stacks of each self symbol, for its call paths
    # Per Thread object and per frames tuple (stacks of one thread, equal chains share them); the
    # objects are kept so that their ids stay their own.
    labels: dict[int, tuple[Thread, str]] = {}
    names_of: dict[int, tuple[tuple[ProfileFrame, ...], set[str]]] = {}
    for s in stacks:
        period, samples = s.period, s.samples
        total_period += period
        total_samples += samples
        leaf = _leaf(s.frames)
        name = leaf.name if leaf else _NO_FRAMES
        _add(self_t, name, period, samples)
        group = by_leaf.get(name)
        if group is None:
            by_leaf[name] = [s]
        else:
            group.append(s)
        if leaf is not None:
            if name not in meta:
                meta[name] = (leaf.kernel, leaf.dso)
            _add(dso_t, leaf.dso or "[unknown]", period, samples)
            if leaf.dso == INLINED_DSO:
                _add(inlined, name, period, samples)
            sp = space["kernel" if leaf.kernel else "user"]
            sp[0] += period
            sp[1] += samples
        named = names_of.get(id(s.frames))
        if named is None:
            named = names_of[id(s.frames)] = (s.frames, set(frame_names(s.frames)))
        for n in named[1]:
            acc = total_t.get(n)
            if acc is None:
                total_t[n] = [period, samples]
            else:
                acc[0] += period
                acc[1] += samples
        th = s.thread
        labelled = labels.get(id(th))
        if labelled is None:
            labelled = labels[id(th)] = (th, _label(th))
        _add(thread_t, labelled[1], period, samples)
    return _Tables(
        total_period,
        total_samples,
        self_t,
        total_t,
        dso_t,
        thread_t,
        meta,
        space,
        inlined,
        lambda name: _paths(by_leaf[name]),
    )


def _paths(stacks: Sequence[ProfileStack]) -> dict[tuple[str, ...], list[Any]]:
    """The call paths of ``stacks``: their names root to leaf -> [period, samples, first line, header of that line]."""
    by_path: dict[tuple[str, ...], list[Any]] = {}
    for s in stacks:
        key = frame_names(s.frames)
        slot = by_path.get(key)
        if slot is None:
            by_path[key] = [s.period, s.samples, s.first_line, s.first_header]
        else:
            slot[0] += s.period
            slot[1] += s.samples
            if s.first_line < slot[2]:
                slot[2], slot[3] = s.first_line, s.first_header
    return by_path


def _tables_numpy(stacks: Sequence[ProfileStack], table: StackTable | None = None) -> _Tables:
    """:class:`_Tables` with numpy: Python once per distinct call chain and thread, never per frame.

    Chains and threads are numbered by identity (:class:`StackTable`: equal chains share one tuple, a
    thread's stacks one Thread), the names of all chains in one C-level pass; each (chain, name) pair is
    kept once (a recursive symbol counts once per stack) and the sums are numpy's, in exact integers.
    """
    from forensics.jit import import_numpy

    import_numpy()  # without OpenBLAS's thread pool
    import numpy as np

    table = table or stack_table(stacks)
    period, samples = table.period, table.samples

    def sums(keys: list[str], of: Any, where: Any = None) -> dict[str, list[int]]:
        """Period and samples per key (``of``: each stack's key number; ``where``: the stacks counted)."""
        p, s = (period, samples) if where is None else (period[where], samples[where])
        per_p = np.zeros(len(keys), np.int64)
        per_s = np.zeros(len(keys), np.int64)
        np.add.at(per_p, of, p)
        np.add.at(per_s, of, s)
        return {k: [a, b] for k, a, b in zip(keys, per_p.tolist(), per_s.tolist(), strict=True)}

    def numbers(values: list[str]) -> tuple[list[str], Any]:
        index = {v: i for i, v in enumerate(dict.fromkeys(values))}
        return list(index), np.fromiter(map(index.__getitem__, values), np.int64, len(values))

    chains, chain_of = table.chains, table.chain_of
    threads, thread_of = table.threads, table.thread_of
    # Totals: every (chain, name) pair once.
    all_names, ids, _, lens = table.names
    pairs = np.sort(np.repeat(np.arange(len(chains), dtype=np.int64), lens) * len(all_names) + ids)
    # Each pair once: sorted, then the first of each run (np.unique's hash table took 30x longer on 190k pairs).
    pairs = pairs[np.r_[True, pairs[1:] != pairs[:-1]]] if len(pairs) else pairs
    owner, name_of_pair = np.divmod(pairs, len(all_names))
    chain_p = np.zeros(len(chains), np.int64)
    chain_s = np.zeros(len(chains), np.int64)
    np.add.at(chain_p, chain_of, period)
    np.add.at(chain_s, chain_of, samples)
    tot_p = np.zeros(len(all_names), np.int64)
    tot_s = np.zeros(len(all_names), np.int64)
    np.add.at(tot_p, name_of_pair, chain_p[owner])
    np.add.at(tot_s, name_of_pair, chain_s[owner])
    total_t = {k: [a, b] for k, a, b in zip(all_names, tot_p.tolist(), tot_s.tolist(), strict=True)}
    # Self: the leaf of each chain.
    leaf_names, leaf_of_chain = numbers([c[-1].name if c else _NO_FRAMES for c in chains])
    leaf_of = leaf_of_chain[chain_of]
    self_t = sums(leaf_names, leaf_of)
    has_leaf = np.fromiter(map(bool, chains), bool, len(chains))[chain_of]
    leafed = np.flatnonzero(has_leaf)
    kernel = np.fromiter((bool(c) and c[-1].kernel for c in chains), bool, len(chains))[chain_of]
    dso_names, dso_of_chain = numbers([(c[-1].dso or "[unknown]") if c else "" for c in chains])
    dso_t = sums(dso_names, dso_of_chain[chain_of][leafed], leafed)
    dso_t.pop("", None)  # the key of chains without frames, which count in no DSO
    printed_inlined = np.fromiter((bool(c) and c[-1].dso == INLINED_DSO for c in chains), bool, len(chains))
    at_inlined = np.flatnonzero(printed_inlined[chain_of])
    inlined = {k: v for k, v in sums(leaf_names, leaf_of[at_inlined], at_inlined).items() if v[1]}
    meta: dict[str, tuple[bool | None, str]] = {}
    if len(leafed):
        named, first = np.unique(leaf_of[leafed], return_index=True)
        for name_i, at in zip(named.tolist(), leafed[first].tolist(), strict=True):
            leaf = chains[int(chain_of[at])][-1]  # the stack's own frames (the table numbers them by identity)
            meta[leaf_names[name_i]] = (leaf.kernel, leaf.dso)
    k_rows = has_leaf & kernel
    u_rows = has_leaf & ~kernel
    space = {
        "kernel": [int(period[k_rows].sum()), int(samples[k_rows].sum())],
        "user": [int(period[u_rows].sum()), int(samples[u_rows].sum())],
    }
    labels, label_of_thread = numbers(list(map(_label, threads)))
    thread_t = sums(labels, label_of_thread[thread_of])
    number_of = {name: i for i, name in enumerate(leaf_names)}

    def paths_of(name: str) -> dict[tuple[str, ...], list[Any]]:
        """:func:`_paths` of the symbol's stacks by chain number: sums per chain, each chain's names once, the
        first line of each chain's stacks the smallest (a stack's first line is its own: one sample a line)."""
        at = np.flatnonzero(leaf_of == number_of[name])
        distinct, inverse = np.unique(chain_of[at], return_inverse=True)
        inverse = inverse.reshape(-1)
        per_p = np.zeros(len(distinct), np.int64)
        per_s = np.zeros(len(distinct), np.int64)
        np.add.at(per_p, inverse, period[at])
        np.add.at(per_s, inverse, samples[at])
        lines = (
            stacks.first_lines[at]
            if isinstance(stacks, StackColumns)
            else np.fromiter(map(_LINE, map(stacks.__getitem__, at.tolist())), np.int64, len(at))
        )
        order = np.lexsort((lines, inverse))  # by chain, then by first line
        lowest = order[np.r_[True, inverse[order][1:] != inverse[order][:-1]]] if len(order) else order
        by_path: dict[tuple[str, ...], list[Any]] = {}
        for c, p, n, k in zip(distinct.tolist(), per_p.tolist(), per_s.tolist(), lowest.tolist(), strict=True):
            key = frame_names(chains[c])
            line = int(lines[k])
            slot = by_path.get(key)
            if slot is None:
                by_path[key] = [p, n, line, stacks[int(at[k])].first_header]
            else:
                slot[0] += p
                slot[1] += n
                if line < slot[2]:
                    slot[2], slot[3] = line, stacks[int(at[k])].first_header
        return by_path

    return _Tables(
        int(period.sum()), int(samples.sum()), self_t, total_t, dso_t, thread_t, meta, space, inlined, paths_of
    )


def compute_hotspots(
    profile: Profile,
    stacks: Iterable[ProfileStack],
    top_paths: int = 5,
    per_path: int = 3,
    event: str | None = None,
    table: StackTable | None = None,
) -> Hotspots:
    """Self/total shares per symbol, per DSO, per thread, kernel vs user, and the paths to the top symbols.

    ``table``: the stacks' :func:`stack_table` when the caller has it (a large profile's tables start from it).
    """
    stacks = stacks if isinstance(stacks, (list, StackColumns)) else list(stacks)
    tables = _tables_numpy(stacks, table) if len(stacks) >= VECTOR_FROM else _tables_python(stacks)
    total_period, total_samples, self_t, total_t, dso_t, thread_t, meta, space, inlined, paths_of = tables
    _inlined_into_dsos(profile.inlined_dsos, inlined, dso_t, meta)
    if _NO_FRAMES in self_t:
        meta[_NO_FRAMES] = (None, "")  # no frame: neither kernel nor user
        # Left out, the table's shares stopped short of 100% with no word why (ue15 #13: cc1 25.80% beside perf
        # report's 26.36%, 51 samples of 7,980 dropped): counted, in their own row, as the self table does.
        dso_t[NO_FRAMES_DSO] = list(self_t[_NO_FRAMES])
    self_rows = _rows(self_t, total_period, meta)
    # perf report --children ranks [unknown] with the callers, but it is no caller anyone can look at (on a
    # system-wide recording without frame pointers it tops the table): left out, and said in a note.
    unknown = total_t.pop(UNKNOWN_FRAME, None)
    total_rows = _rows(total_t, total_period)
    paths: dict[str, tuple[CallPath, ...]] = {}
    for row in self_rows[:top_paths]:
        by_path = paths_of(row.key)
        best = sorted(by_path.items(), key=lambda kv: (-int(kv[1][0]), kv[0]))[:per_path]
        paths[row.key] = tuple(
            CallPath(k, int(v[0]), int(v[1]), _pct(int(v[0]), total_period), int(v[2]), str(v[3])) for k, v in best
        )
    first = event or profile.first_event
    # A tracepoint's samples name no event in their headers (stackcollapse-perf.pl's rule): the header or their
    # tracepoint field names it, and says whether the samples count CPU time.
    sampled = sampled_event(
        first or "", profile.recorded_events, (cp.first_header for rows in paths.values() for cp in rows)
    )
    return Hotspots(
        event=first or sampled.name,
        sampled=sampled,
        total_period=total_period,
        total_samples=total_samples,
        self_symbols=self_rows,
        total_symbols=total_rows,
        dsos=_rows(dso_t, total_period),
        threads=_rows(thread_t, total_period),
        kernel=Share("kernel", space["kernel"][0], space["kernel"][1], _pct(space["kernel"][0], total_period)),
        user=Share("user", space["user"][0], space["user"][1], _pct(space["user"][0], total_period)),
        paths=paths,
        other_events={e: n for e, n in profile.events.items() if first is not None and e != first},
        no_frames=None
        if _NO_FRAMES not in self_t
        else Share(
            _NO_FRAMES, self_t[_NO_FRAMES][0], self_t[_NO_FRAMES][1], _pct(self_t[_NO_FRAMES][0], total_period), None
        ),
        unresolved=None
        if unknown is None
        else Share(UNKNOWN_FRAME, unknown[0], unknown[1], _pct(unknown[0], total_period)),
    )


def _pct(part: int, total: int) -> float:
    return 100.0 * part / total if total else 0.0


def folded_lines(stacks: Iterable[ProfileStack], merged: dict[tuple[str, int], list[Any]] | None = None) -> list[str]:
    """Brendan Gregg's folded format, as ``stackcollapse-perf.pl`` prints it: ``comm;root;..;leaf count``.

    Counts are period sums (the script's count when perf printed a period, else samples); lines are
    sorted by their bytes, as Perl's ``sort`` sorts them.  ``merged``: :func:`periods_by_command` of
    ``stacks`` when the caller has it (the flame graph uses it too).
    """
    joined: dict[int, str] = {}
    rows = []
    for (comm, ident), (frames, period) in (periods_by_command(stacks) if merged is None else merged).items():
        chain = joined.get(ident)
        if chain is None:
            chain = joined[ident] = ";".join(map(_NAME, frames))
        rows.append((comm, chain, period))
    return folded_rows(rows)


def folded_rows(rows: Iterable[tuple[str, str, int]]) -> list[str]:
    """The folded lines of (command name, frame names joined by ``;``, period) rows: equal lines summed, sorted by
    their bytes (:func:`folded_lines`; the reader's sums, :attr:`forensics.types.profile.Profile.folded`)."""
    out: dict[str, int] = {}
    heads: dict[str, str] = {}  # a command name as the script prints it (spaces as underscores), made once
    for comm, chain, period in rows:
        if comm:
            head = heads.get(comm)
            if head is None:
                head = heads[comm] = comm.replace(" ", "_")
            line = head + ";" + chain if chain else head
        else:
            line = chain
        out[line] = out.get(line, 0) + period
    return [f"{k} {out[k]}" for k in byte_sorted(list(out))]


def byte_sorted(texts: list[str]) -> list[str]:
    """``texts`` sorted by their bytes (UTF-8, undecodable bytes as they were read), as Perl's ``sort`` sorts them.

    UTF-8 keeps the order of code points, so texts without a lone surrogate (the undecodable bytes that
    ``surrogateescape`` keeps) sort as strings, in C, with no bytes made; the others by their bytes.
    """
    if not all(map(str.isascii, texts)):  # (a string knows whether it is ASCII: no scan)
        try:
            "".join(texts).encode("utf-8")
        except UnicodeEncodeError:  # a lone surrogate: its byte sorts where its code point does not
            return sorted(texts, key=lambda t: t.encode("utf-8", "surrogateescape"))
    texts.sort()
    return texts
