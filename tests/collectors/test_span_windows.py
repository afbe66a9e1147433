"""The span-window table (collectors/span_windows.py) answers the breakdown as the table of every kernel row does.

On the project's LTTng kernel + user-space session (48 requests, with preemptions, pipe and mutex waits,
timer interrupts and syscalls): its spans are read from the user-space streams alone (Session.ust_rows),
then the kernel rows are kept twice, every row (KernelKeeper) and only around some spans (WindowKeeper).
For every span kept, the breakdown, each of its parts and their citations must be equal, and so must the
IRQ handler open at each waking inside the windows (the walk back that crosses a window's start).
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

from collectors.ctf.feed import feed_session
from collectors.ctf.reader import Session
from collectors.span_windows import WindowKeeper, merged_windows
from collectors.spans import KernelKeeper, ctf_syscalls, statedump_threads, ust_marks
from detectors.spans.breakdown import breakdown
from detectors.spans.pairing import pair
from forensics.types.spans import IRQ_ENTRY, SWITCH, WAKES, KernelTable, Span
from tests.collectors.ctf_check import extract_session


class _NoEngine:
    """A batch sink that analyses nothing (the keepers in front of it keep the rows)."""

    done = False

    def feed(self, batch: object) -> None:
        pass


@pytest.fixture(scope="module")
def session(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return extract_session(tmp_path_factory.mktemp("lttng"))


def _table(root: Path, keeper: KernelKeeper | WindowKeeper, user: bool) -> KernelTable:
    s = Session(str(root), compiled=False)
    ctf = feed_session(s, keeper, keep=True, user=user)  # type: ignore[arg-type]
    return keeper.table(ctf_syscalls(s, ctf.syscalls()), statedump_threads(ctf))


def test_the_windows_give_the_whole_tables_breakdowns(session: Path) -> None:
    s = Session(str(session), compiled=False)
    marks, _notes = ust_marks(s, *s.ust_rows())
    full_keeper = KernelKeeper(_NoEngine(), str(session))
    full_read = feed_session(Session(str(session), compiled=False), full_keeper, keep=True)  # type: ignore[arg-type]
    assert ust_marks(full_read.session, *full_read.rows())[0] == marks  # read first: the marks read with the rest
    full = full_keeper.table(ctf_syscalls(full_read.session, full_read.syscalls()), statedump_threads(full_read))
    spans, _unmatched = pair(sorted(marks, key=lambda m: m.ts), [])
    assert len(spans) == 48
    # Every third span, and two spans that overlap (one window): windows with gaps between them.
    one = spans[1]
    kept = [*spans[::3], one, Span("wide", one.tid, "", one.start - 0.002, one.end, one.begin_ref, one.end_ref)]
    windows = [(x.start, x.end, x.tid) for x in kept]
    # And a window that starts inside an IRQ handler: its rows' open handler is one from before the window.
    cpu = int(full.cpu[np.flatnonzero(full.kind == IRQ_ENTRY)[0]])
    irq = next(h for h in full.irqs_between(cpu, -math.inf, math.inf) if h[1] > h[0] + 2e-6)
    windows.append(((irq[0] + irq[1]) / 2, irq[1] + 0.0005, one.tid))
    # And probes at times no span chose, of the busiest threads: their state at the start is any state.
    busy = np.unique(full.next_pid[(full.kind == SWITCH) & (full.next_pid > 0)], return_counts=True)
    ends = (one.begin_ref, one.end_ref)
    threads = busy[0][np.argsort(-busy[1])][:4].tolist()
    lo, hi = float(full.ts[0]), float(full.ts[-1])
    probes = [
        Span("probe", tid, "", t0, t0 + 0.003, *ends)
        for k, t0 in enumerate(np.linspace(lo + 0.01, hi - 0.01, 24).tolist())
        for tid in threads[k % 2 :: 2]
    ]
    # A probe that starts between a thread's wakeup and its switch-in (its last row before: the wakeup).
    ts, kind, pid, nxt = full.ts, full.kind, full.pid, full.next_pid
    wake = next(
        i
        for i in np.flatnonzero(np.isin(kind, WAKES) & np.isin(pid, threads)).tolist()
        if (later := np.flatnonzero((kind == SWITCH) & (nxt == pid[i]) & (ts > ts[i]))).size and ts[later[0]] > ts[i]
    )
    switch_in = int(np.flatnonzero((kind == SWITCH) & (nxt == pid[wake]) & (ts > ts[wake]))[0])
    probes.append(Span("woken", int(pid[wake]), "", (ts[wake] + ts[switch_in]) / 2, ts[switch_in] + 0.001, *ends))
    kept += probes
    windows += [(x.start, x.end, x.tid) for x in probes]
    windowed = _table(session, WindowKeeper(_NoEngine(), str(session), windows), False)
    assert len(windowed.ts) < len(full.ts) / 3  # the point: far fewer rows
    assert windowed.has_syscalls and full.has_syscalls
    parts = 0
    for span in kept:
        got, want = breakdown(windowed, span), breakdown(full, span)
        assert got == want, span
        parts += len(got.parts)
    assert parts > 40
    assert {p.what for x in probes for p in breakdown(full, x).parts} >= {"running", "preempted", "blocked", "runnable"}
    # The IRQ/softirq open at each row in a window (KernelTable.irq_at: asked at wakings), cited by stream and byte.
    w_starts, w_ends = merged_windows(windows)
    full_at = {full.ref(i).where: i for i in range(len(full.ts))}
    inside, crossing = 0, 0
    cpus = sorted(set(full.cpu.tolist()))
    named = sorted(set(full.pid[full.kind == SWITCH].tolist()))
    for i in range(len(windowed.ts)):
        w = int(np.searchsorted(w_starts, windowed.ts[i], side="right")) - 1
        if w < 0 or windowed.ts[i] > w_ends[w]:
            continue  # a row from before a window: never asked
        cpu = int(windowed.cpu[i])
        got_irq, want_irq = windowed.irq_at(cpu, i), full.irq_at(cpu, full_at[windowed.ref(i).where])
        assert (None if got_irq is None else windowed.ref(got_irq)) == (
            None if want_irq is None else full.ref(want_irq)
        )
        inside += want_irq is not None
        crossing += got_irq is not None and windowed.ts[got_irq] < w_starts[w]
        # Who ran on each CPU, what ran since the window began, and the names of the row's threads then.
        at = float(windowed.ts[i])
        for c in cpus:
            assert windowed.current(c, at) == full.current(c, at)
            assert windowed.ran_between(c, w_starts[w], at) == full.ran_between(c, w_starts[w], at)
        for tid in {int(windowed.pid[i]), int(windowed.next_pid[i]), one.tid, *named[:: max(1, len(named) // 8)]}:
            assert windowed.name_at(tid, at) == full.name_at(tid, at), (tid, at)
    assert inside > 20 and crossing > 0
