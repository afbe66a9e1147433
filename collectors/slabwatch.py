"""The slab-watch sampling loop: read kernel memory counters every interval into a store.

One sample reads, once each: /proc/slabinfo, /proc/meminfo, /proc/vmstat,
/proc/uptime, /proc/sys/fs/{dentry-state,inode-nr,file-nr}, the boot id and
the kernel log records logged since the previous sample.  No subprocess is
started.  Samples are taken on a fixed schedule (start + k x interval), so
slow samples do not make the series drift; a slot missed entirely is skipped.

SIGTERM and SIGINT end the loop after the sample being taken is committed.
Progress goes to a callback; the caller (the CLI) decides how to show it.
"""

from __future__ import annotations

import contextlib
import os
import signal
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from types import FrameType
from typing import NamedTuple, TypeVar

from collectors import procfs
from collectors.kmsg import KmsgBatch, KmsgReader
from collectors.slabstore import RunInfo, Sample, SlabStore
from forensics.errors import CollectionError, InputError
from forensics.model import NotAvailable
from forensics.types.prometheus import is_gap
from forensics.types.slab import PartialSample, clock_stepped

#: The smallest interval a user may ask for; tests and benchmarks use :data:`MIN_INTERNAL_INTERVAL`.
MIN_INTERVAL = 1.0
MAX_INTERVAL = 3600.0
MIN_INTERNAL_INTERVAL = 0.01

_T = TypeVar("_T")


@dataclass(frozen=True)
class WatchPlan:
    """What to sample, how often and for how long (``duration`` None: until stopped)."""

    root: Path
    interval: float
    duration: float | None
    require_slabinfo: bool = False

    def expected_samples(self) -> int | None:
        """How many samples the plan takes when nothing stops it early."""
        return None if self.duration is None else int(self.duration / self.interval) + 1


class Mover(NamedTuple):
    """A cache whose bytes in use changed since the previous sample."""

    name: str
    delta_bytes: int
    active_bytes: int


@dataclass(frozen=True)
class Progress:
    """What the loop tells its caller after each committed sample."""

    run_id: int
    index: int  # 1 for the first sample of this run
    sample_id: int
    elapsed: float
    plan: WatchPlan
    cost_seconds: float
    missing: tuple[str, ...]
    movers: tuple[Mover, ...]
    kmsg_records: int
    rebooted: bool  # the boot id changed since the previous sample: a series break
    doubtful: tuple[str, ...] = ()  # rows left out of this sample, the wall clock going back: said every time
    sample: Sample | None = None  # what was read (for exporters such as slab-watch --textfile-dir)
    missed: Missed | None = None  # the slots missed just before this sample (a gap in sampling), None if none
    missed_slots: int = 0  # slots missed so far in this run


class Missed(NamedTuple):
    """Scheduled slots no sample was taken in, between two samples of a run: a gap, as ``kforensic leaks`` says one
    (:func:`~forensics.types.prometheus.is_gap`: more than 2.5 intervals; a stopped or starved sampler, a suspend)."""

    slots: int
    seconds: float  # from the previous sample to this one

    def said(self) -> str:
        """``15 slots missed (79.0 s since the previous sample)``."""
        return (
            f"{self.slots} slot{'s' if self.slots != 1 else ''} missed ({self.seconds:.1f} s since the previous sample)"
        )


def missed_slots(previous_wall: float | None, wall: float, interval: float) -> Missed | None:
    """The slots missed between a run's samples at ``previous_wall`` and ``wall`` (stored times), None when no gap."""
    if previous_wall is None or not is_gap(wall - previous_wall, interval):
        return None
    seconds = wall - previous_wall
    return Missed(max(1, round(seconds / interval) - 1), seconds)


@dataclass(frozen=True)
class WatchResult:
    """How a run ended."""

    run_id: int
    samples: int
    stopped_by: str | None  # the signal name, None when the duration ran out
    cpu_seconds: float
    partial: tuple[PartialSample, ...] = ()  # samples left out: a read of /proc/slabinfo or meminfo cut short
    missed: tuple[Missed, ...] = ()  # each gap in the run's sampling

    def missed_said(self) -> str:
        """``15 slots missed in 1 gap (longest 79.0 s)``, empty when none was."""
        if not self.missed:
            return ""
        slots = sum(m.slots for m in self.missed)
        gaps = len(self.missed)
        longest = max(m.seconds for m in self.missed)
        plural = ("s" if slots != 1 else "", "s" if gaps != 1 else "")
        return f"{slots} slot{plural[0]} missed in {gaps} gap{plural[1]} (longest {longest:.1f} s)"


def _parse(read: procfs.FileRead, parser: Callable[[bytes, str], _T]) -> _T | NotAvailable:
    if read.data is None:
        return NotAvailable(f"{read.record.path}: {read.record.error}")
    try:
        return parser(read.data, read.record.path)
    except InputError as exc:
        return NotAvailable(exc.message)


def take_sample(root: Path, kmsg: KmsgReader | None) -> Sample:
    """Read one sample below ``root`` (each file once); ``kmsg`` None skips the kernel log."""
    started_cpu = time.process_time()
    wall = time.time()
    slab_read = procfs.read_file(root, procfs.SLABINFO)
    mem_read = procfs.read_file(root, procfs.MEMINFO)
    vm_read = procfs.read_file(root, procfs.VMSTAT)
    up_read = procfs.read_file(root, procfs.UPTIME)
    fs, fs_records = procfs.read_fs_counters(root)
    boot_id = procfs.read_boot_id(root)
    batch: KmsgBatch | NotAvailable = kmsg.read_new() if kmsg is not None else NotAvailable("kernel log not read")
    return Sample(
        wall=wall,
        uptime=procfs.parse_uptime(up_read.data),
        boot_id=boot_id,
        slabinfo=_parse(slab_read, procfs.parse_slabinfo),
        meminfo=_parse(mem_read, procfs.parse_meminfo),
        vmstat=_parse(vm_read, procfs.parse_vmstat),
        fs=fs,
        kmsg=batch,
        cost_seconds=time.process_time() - started_cpu,
        sources=(slab_read.record, mem_read.record, vm_read.record, up_read.record, *fs_records),
    )


@dataclass(frozen=True)
class MonotonicPlacement:
    """Samples on the monotonic clock across wall-clock steps (as slab-import does, collectors.slabimport).

    Within a boot, a sample whose wall time moved more than 2 s (+1% of the
    uptime passed) away from the uptime since the previous sample is a step
    of the wall clock (NTP, a VM resumed): it is said in the sample's notes and
    the sample is stored at the previous one's time plus the uptime that
    passed, so growth is measured on uptime across the step.
    """

    offset: float = 0.0  # how far the wall clock has been stepped in this boot
    wall: float | None = None  # the previous sample's stored time
    uptime: float | None = None

    def place(self, sample: Sample, rebooted: bool) -> tuple[Sample, MonotonicPlacement]:
        """The sample as stored, and the placement for the next one."""
        up = sample.uptime if isinstance(sample.uptime, float) else None
        if rebooted or up is None:
            return sample, MonotonicPlacement(0.0, sample.wall, up)
        offset = self.offset
        if self.wall is not None and self.uptime is not None and up >= self.uptime:
            passed = up - self.uptime
            moved = (sample.wall - offset) - (self.wall + passed)
            if clock_stepped(moved, passed):
                offset += moved
                note = (
                    f"the wall clock stepped {moved:+.3f} s while uptime went on (not a reboot): stored at the "
                    f"monotonic time, {passed:.3f} s after the previous sample (read {sample.wall:.3f})"
                )
                sample = replace(sample, notes=(*sample.notes, note))
        if offset:
            sample = replace(sample, wall=sample.wall - offset)
        return sample, MonotonicPlacement(offset, sample.wall, up)


def cut_short(sample: Sample) -> PartialSample | None:
    """The sample as a :class:`PartialSample` when its slabinfo or meminfo read ended inside a row, else None.

    procfs files are generated as they are read; a read that ends early (an
    interrupted or failing read) leaves a last row without its newline.  Every
    row after it is missing, so the sample would read as caches that vanished.
    """
    for part, record in zip((sample.slabinfo, sample.meminfo), sample.sources[:2], strict=False):
        if isinstance(part, NotAvailable):
            continue
        for row in part.rejected:
            if "truncated" in row.reason:
                return PartialSample(record.path, row.line, row.text, 1, sample.wall)
    return None


def read_run_info(root: Path, origin: str, interval: float | NotAvailable) -> RunInfo:
    """Read what is recorded once per run: identity, MemTotal, slab aliases and reclaim_account."""
    meminfo = _parse(procfs.read_file(root, procfs.MEMINFO), procfs.parse_meminfo)
    topology = procfs.read_slab_topology(root)
    return RunInfo(
        origin=origin,
        identity=procfs.read_identity(root, meminfo),
        topology=topology,
        interval=interval,
        root=str(root),
    )


def check_slabinfo(root: Path) -> str | None:
    """Why /proc/slabinfo cannot be read below ``root`` (mode 0400: root only), or None when it can."""
    read = procfs.read_file(root, procfs.SLABINFO)
    if read.data is None:
        return f"cannot read {read.record.path}: {read.record.error}"
    return None


def slabinfo_hint(root: Path) -> str:
    """What to do about an unreadable slabinfo: it is mode 0400 where it exists; a missing one is no permission
    matter (a kernel without CONFIG_SLUB_DEBUG/CONFIG_SLAB has none, a ``--root`` tree may lack it)."""
    if not (root / procfs.SLABINFO).exists():
        return "it does not exist: a kernel without slabinfo, or a --root tree without it"
    if os.geteuid() == 0:
        return "root cannot read it either: check the file (a container's /proc, a security module)"
    return "run as root (slabinfo is mode 0400)"


def require_slabinfo(root: Path) -> None:
    """Raise :class:`CollectionError` unless /proc/slabinfo is readable."""
    problem = check_slabinfo(root)
    if problem is not None:
        raise CollectionError(problem, hint=f"{slabinfo_hint(root)}; or drop --require-slabinfo")


def _active_bytes(sample: Sample) -> dict[str, int]:
    if isinstance(sample.slabinfo, NotAvailable):
        return {}
    return {c.name: c.active_objs * c.objsize for c in sample.slabinfo.caches}


def top_movers(before: dict[str, int], after: dict[str, int], count: int = 3) -> tuple[Mover, ...]:
    """The caches whose bytes in use changed most (by absolute change), appeared and vanished ones included."""
    movers = [
        Mover(name, after.get(name, 0) - before.get(name, 0), after.get(name, 0))
        for name in before.keys() | after.keys()
        if after.get(name, 0) != before.get(name, 0)
    ]
    movers.sort(key=lambda m: (-abs(m.delta_bytes), m.name))
    return tuple(movers[:count])


class SlabWatcher:
    """Runs a :class:`WatchPlan` into a store opened for writing."""

    def __init__(self, store: SlabStore, plan: WatchPlan) -> None:
        self.store = store
        self.plan = plan
        self._stop = threading.Event()
        self._stopped_by: str | None = None
        self._previous_handlers: dict[int, signal._HANDLER] = {}

    def stop(self, reason: str = "stop()") -> None:
        """Ask the loop to end after the current sample (safe from a signal handler or another thread)."""
        self._stopped_by = reason
        self._stop.set()

    def _on_signal(self, signum: int, frame: FrameType | None) -> None:
        self.stop(signal.Signals(signum).name)
        # A second signal gets the usual behaviour (Ctrl-C twice interrupts a sample that hangs).
        signal.signal(signum, self._previous_handlers.get(signum, signal.SIG_DFL))

    def _open_kmsg(self, boot_id: str | NotAvailable) -> KmsgReader:
        last = self.store.last_kmsg_seq(boot_id) if isinstance(boot_id, str) else None
        return KmsgReader(self.plan.root, last)

    def run(self, on_sample: Callable[[Progress], None] | None = None) -> WatchResult:
        """Sample until the duration ends or a signal arrives; return how the run ended."""
        if self.plan.require_slabinfo:
            require_slabinfo(self.plan.root)
        handlers = self._previous_handlers
        if threading.current_thread() is threading.main_thread():
            for wanted in (signal.SIGTERM, signal.SIGINT):
                handlers[wanted] = signal.signal(wanted, self._on_signal)
        try:
            return self._loop(on_sample)
        finally:
            for signum, previous in handlers.items():
                signal.signal(signum, previous)
            handlers.clear()

    def _loop(self, on_sample: Callable[[Progress], None] | None) -> WatchResult:
        plan = self.plan
        cpu_start = time.process_time()
        try:
            run_id = self.store.begin_run(read_run_info(plan.root, "live", plan.interval))
        except InputError as exc:
            raise InputError(f"{exc.message}; the store keeps none of this run's samples", hint=exc.hint) from None
        boot_id = procfs.read_boot_id(plan.root)
        kmsg = self._open_kmsg(boot_id)
        start = time.monotonic()
        previous: dict[str, int] | None = None
        last_wall: float | None = None
        taken = 0
        slot = 0
        partial: list[PartialSample] = []
        gaps: list[Missed] = []
        stored: float | None = None  # the previous committed sample's stored time (this boot)
        clock = MonotonicPlacement()
        try:
            while not self._stop.is_set():
                sample = take_sample(plan.root, kmsg)
                rebooted = taken > 0 and sample.boot_id != boot_id
                if rebooted:
                    # A new boot numbers its log from 0 again: read it from the start.
                    kmsg.close()
                    kmsg = self._open_kmsg(sample.boot_id)
                    sample = take_sample(plan.root, kmsg)
                    boot_id = sample.boot_id
                placed, clock = clock.place(sample, rebooted)
                stepped = len(placed.notes) > len(sample.notes)  # a step already said, stored on uptime
                sample = placed
                if last_wall is not None and sample.wall < last_wall and not stepped:
                    # The wall clock was stepped back (NTP, an operator): flagged in the store and the progress.
                    step = f"the wall clock went back {last_wall - sample.wall:.3f} s since the previous sample"
                    sample = replace(sample, notes=(*sample.notes, f"{step}: sample times are out of order here"))
                last_wall = sample.wall if last_wall is None else max(last_wall, sample.wall)
                cut = cut_short(sample)
                if cut is not None:  # left out (and said at the end): its missing rows would read as gone caches
                    partial.append(cut)
                else:
                    # Measured on the stored times, as the analysis measures them (across a clock step: on uptime).
                    missed = None if rebooted else missed_slots(stored, sample.wall, plan.interval)
                    gaps += [missed] if missed is not None else []
                    so_far = sum(m.slots for m in gaps)
                    previous = self._commit(
                        run_id, sample, taken + 1, start, previous, rebooted, on_sample, missed, so_far
                    )
                    stored = sample.wall
                    taken += 1
                # The next slot on the fixed schedule that is still ahead.
                now = time.monotonic() - start
                slot = max(slot + 1, int(now / plan.interval) + 1)
                due = slot * plan.interval
                if plan.duration is not None and due > plan.duration + 1e-9:
                    break
                self._stop.wait(max(0.0, due - (time.monotonic() - start)))
        finally:
            kmsg.close()
            # When the store itself failed, that error is the one to report, not this one.
            with contextlib.suppress(InputError):
                self.store.end_run(run_id)
        cpu = time.process_time() - cpu_start
        return WatchResult(run_id, taken, self._stopped_by, cpu, tuple(partial), tuple(gaps))

    def _commit(
        self,
        run_id: int,
        sample: Sample,
        index: int,
        start: float,
        previous: dict[str, int] | None,
        rebooted: bool,
        on_sample: Callable[[Progress], None] | None,
        missed: Missed | None = None,
        missed_so_far: int = 0,
    ) -> dict[str, int]:
        """Store one sample and tell the caller; return its bytes per cache (the next sample's movers)."""
        try:
            sample_id = self.store.append_sample(run_id, sample)
        except InputError as exc:
            # A full disk: the samples committed before stay in the store (one transaction each).
            raise InputError(
                f"{exc.message}; the store keeps the {index - 1} samples taken before (run {run_id})", hint=exc.hint
            ) from None
        now_bytes = _active_bytes(sample)
        if on_sample is not None:
            on_sample(
                Progress(
                    run_id=run_id,
                    index=index,
                    sample_id=sample_id,
                    elapsed=time.monotonic() - start,
                    plan=self.plan,
                    cost_seconds=sample.cost_seconds or 0.0,
                    missing=sample.missing(),
                    movers=() if previous is None or rebooted else top_movers(previous, now_bytes),
                    kmsg_records=len(sample.kmsg.records) if isinstance(sample.kmsg, KmsgBatch) else 0,
                    rebooted=rebooted,
                    doubtful=(*sample.rejected(), *sample.notes),
                    sample=sample,
                    missed=missed,
                    missed_slots=missed_so_far,
                )
            )
        return now_bytes
