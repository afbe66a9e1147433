"""Hotspots of a CPU profile: self and total shares per symbol, DSO, thread, kernel vs user.

Pure: a :class:`collectors.perf_script.Profile` in, :class:`Hotspots` out.  Shares are of the
event's *period* (what ``perf report`` shows as Overhead); sample counts are kept beside them.
Only the first event of the input is summed (as ``perf report`` shows one event at a time and
``stackcollapse-perf.pl`` keeps the first), the others are counted in ``other_events``.
"""

from __future__ import annotations

from collections.abc import Iterable

from forensics.types.profile import CallPath, Hotspots, Profile, ProfileFrame, ProfileStack, Share, Thread, frame_names


def selected_stacks(
    profile: Profile,
    comm: str | None = None,
    pid: int | None = None,
    tid: int | None = None,
    space: str | None = None,
    event: str | None = None,
) -> list[ProfileStack]:
    """The stacks of one event (the first by default) that pass the thread filters, cut to one space.

    ``space`` "kernel" keeps kernel frames only, "user" user frames only (stacks left empty drop out).
    """
    out: list[ProfileStack] = []
    event = event or profile.first_event
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
    table: dict[str, list[int]], total: int, meta: dict[str, tuple[bool, str]] | None = None
) -> tuple[Share, ...]:
    rows = sorted(table.items(), key=lambda kv: (-kv[1][0], kv[0]))
    return tuple(
        Share(
            k,
            v[0],
            v[1],
            100.0 * v[0] / total if total else 0.0,
            *(meta.get(k, (False, "")) if meta else (False, "")),
        )
        for k, v in rows
    )


def _add(table: dict[str, list[int]], key: str, period: int, samples: int) -> None:
    slot = table.get(key)
    if slot is None:
        table[key] = [period, samples]
    else:
        slot[0] += period
        slot[1] += samples


def compute_hotspots(
    profile: Profile, stacks: Iterable[ProfileStack], top_paths: int = 5, per_path: int = 3, event: str | None = None
) -> Hotspots:
    """Self/total shares per symbol, per DSO, per thread, kernel vs user, and the paths to the top symbols."""
    stacks = list(stacks)
    self_t: dict[str, list[int]] = {}
    total_t: dict[str, list[int]] = {}
    dso_t: dict[str, list[int]] = {}
    thread_t: dict[str, list[int]] = {}
    meta: dict[str, tuple[bool, str]] = {}
    space = {"kernel": [0, 0], "user": [0, 0]}
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
        name = leaf.name if leaf else "[no frames]"
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
            labelled = labels[id(th)] = (th, th.comm + (f"/{th.tid}" if th.tid is not None else ""))
        _add(thread_t, labelled[1], period, samples)
    self_rows = _rows(self_t, total_period, meta)
    total_rows = _rows(total_t, total_period)
    paths: dict[str, tuple[CallPath, ...]] = {}
    for row in self_rows[:top_paths]:
        by_path: dict[tuple[str, ...], list[int | str]] = {}
        for s in by_leaf[row.key]:
            key = frame_names(s.frames)
            slot = by_path.get(key)
            if slot is None:
                by_path[key] = [s.period, s.samples, s.first_line, s.first_header]
            else:
                slot[0] = int(slot[0]) + s.period
                slot[1] = int(slot[1]) + s.samples
                if s.first_line < int(slot[2]):
                    slot[2], slot[3] = s.first_line, s.first_header
        best = sorted(by_path.items(), key=lambda kv: (-int(kv[1][0]), kv[0]))[:per_path]
        paths[row.key] = tuple(
            CallPath(k, int(v[0]), int(v[1]), 100.0 * int(v[0]) / total_period, int(v[2]), str(v[3])) for k, v in best
        )
    first = event or profile.first_event
    return Hotspots(
        event=first or "",
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
    )


def _pct(part: int, total: int) -> float:
    return 100.0 * part / total if total else 0.0


def folded_lines(stacks: Iterable[ProfileStack]) -> list[str]:
    """Brendan Gregg's folded format, as ``stackcollapse-perf.pl`` prints it: ``comm;root;..;leaf count``.

    Counts are period sums (the script's count when perf printed a period, else samples); lines are
    sorted by their bytes, as Perl's ``sort`` sorts them.
    """
    out: dict[str, int] = {}
    # Per frames tuple (equal chains share one); the tuple is kept so that its id stays its own.
    joined: dict[int, tuple[tuple[ProfileFrame, ...], str]] = {}
    for s in stacks:
        got = joined.get(id(s.frames))
        if got is None:
            got = joined[id(s.frames)] = (s.frames, ";".join(frame_names(s.frames)))
        chain = got[1]
        comm = s.thread.comm
        key = (comm.replace(" ", "_") + ";" + chain if chain else comm.replace(" ", "_")) if comm else chain
        out[key] = out.get(key, 0) + s.period
    return [f"{k} {v}" for k, v in sorted(out.items(), key=lambda kv: kv[0].encode("utf-8", "surrogateescape"))]
