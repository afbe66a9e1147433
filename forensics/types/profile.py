"""A CPU profile as read: frames, stacks with their counts, threads (what the profile detectors read)."""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field, fields
from functools import cached_property
from itertools import chain, repeat
from operator import attrgetter, index, itemgetter
from typing import TYPE_CHECKING, Any, NamedTuple, TypeVar, overload

from forensics.model import Severity, SourceRecord

if TYPE_CHECKING:
    import re
    from collections.abc import Iterable


class ProfileFrame(NamedTuple):
    """One frame of a call chain, named as stackcollapse-perf.pl names it (a tuple: made by the thousand)."""

    name: str
    dso: str
    kernel: bool
    jit: bool
    inlined: bool


_NAME = itemgetter(0)  # a ProfileFrame's name (a tuple field: read in C, no Python call per frame)
_FRAMES_OF, _THREAD_OF = attrgetter("frames"), attrgetter("thread")
_PERIOD_OF, _SAMPLES_OF = attrgetter("period"), attrgetter("samples")


def frame_names(frames: tuple[ProfileFrame, ...]) -> tuple[str, ...]:
    """The names of a call chain's frames, root first."""
    return tuple(map(_NAME, frames))


class ChainNames(NamedTuple):
    """The frame names of a table's chains as numbers: each distinct name once, each chain a run of numbers."""

    names: list[str]  # the distinct names, in the order the chains first name them
    flat: Any  # the number of each frame's name, chain after chain, root to leaf (int64)
    starts: Any  # where each chain's run starts in ``flat``
    lengths: Any  # its frames


@dataclass(frozen=True)
class StackTable:
    """Stacks numbered by call chain and by thread, with their periods and samples as int64 arrays.

    Numbered by identity, in the order first met: equal chains share one frames tuple and a thread's
    stacks one :class:`Thread` (the reader makes them so), so a table per chain or thread is a sum over
    numbers, not a loop over stacks.  What the tables of a large profile start from (:func:`stack_table`).
    """

    chains: list[tuple[ProfileFrame, ...]]
    chain_of: Any  # each stack's chain number
    threads: list[Thread]
    thread_of: Any  # each stack's thread number
    period: Any
    samples: Any

    @cached_property
    def names(self) -> ChainNames:
        """The chains' frame names as numbers (made once; the hotspot tables, rule classes and unknown-frame
        count read them)."""
        import numpy as np

        names = list(map(_NAME, chain.from_iterable(self.chains)))
        index = {name: i for i, name in enumerate(dict.fromkeys(names))}
        lengths = np.fromiter(map(len, self.chains), np.int64, len(self.chains))
        return ChainNames(
            list(index),
            np.fromiter(map(index.__getitem__, names), np.int64, len(names)),
            np.cumsum(lengths) - lengths,
            lengths,
        )


#: Stacks from which the tables are summed with numpy (below, importing it costs more than it saves).
VECTOR_FROM = 4096

#: The name perf gives a frame it could not resolve (no symbol, or an unwind without frame pointers).
UNKNOWN_FRAME = "[unknown]"
#: The DSO of a frame perf script printed as ``(inlined)`` with no DSO: perf prints none for a function that
#: debug info names at that address other than the symbol table does (glibc's internal names under
#: --call-graph dwarf: ``__pthread_spin_lock`` in ``pthread_spin_lock@@GLIBC_2.34``); ``perf report --sort dso``
#: counts such samples in the DSO of the address, which the text does not carry.
INLINED_DSO = "(inlined: perf printed no DSO)"


def _numbered(objects: list[Any]) -> tuple[list[Any], list[int]]:
    """The distinct objects (by identity, in first-seen order) and each one's number, in C-level maps."""
    ids = list(map(id, objects))
    distinct = dict(zip(ids, objects, strict=True))  # first-seen order; one object per id
    number = dict(zip(distinct, range(len(distinct)), strict=True))
    return list(distinct.values()), list(map(number.__getitem__, ids))


def stack_table(stacks: Sequence[ProfileStack]) -> StackTable:
    """:class:`StackTable` of ``stacks`` (numpy is imported)."""
    from forensics.jit import import_numpy

    import_numpy()  # without OpenBLAS's thread pool
    import numpy as np

    n = len(stacks)
    chains, chain_of = _numbered(list(map(_FRAMES_OF, stacks)))
    threads, thread_of = _numbered(list(map(_THREAD_OF, stacks)))
    return StackTable(
        chains,
        np.array(chain_of, np.int64),
        threads,
        np.array(thread_of, np.int64),
        np.fromiter(map(_PERIOD_OF, stacks), np.int64, n),
        np.fromiter(map(_SAMPLES_OF, stacks), np.int64, n),
    )


def sums(of: Any, size: int, values: Any) -> Any:
    """``values`` summed per number ``of`` (0..size-1), in exact int64."""
    import numpy as np

    out = np.zeros(size, np.int64)
    np.add.at(out, of, values)
    return out


def _by_command_table(table: StackTable) -> dict[tuple[str, int], list[Any]]:
    """:func:`periods_by_command` from a :class:`StackTable`: numbers, not a loop over the stacks."""
    import numpy as np

    comms = [th.folded_name for th in table.threads]
    comm_names = list(dict.fromkeys(comms))
    number = dict(zip(comm_names, range(len(comm_names)), strict=True))
    comm_of_thread = np.array(list(map(number.__getitem__, comms)), np.int64)
    n_chains = len(table.chains)
    key = comm_of_thread[table.thread_of] * n_chains + table.chain_of
    keys, first, inverse = np.unique(key, return_index=True, return_inverse=True)
    totals = sums(inverse, len(keys), table.period)
    order = np.argsort(first, kind="stable")  # the order the stacks first met each key, as the loop
    chains = table.chains
    merged: dict[tuple[str, int], list[Any]] = {}
    for k, p in zip(keys[order].tolist(), totals[order].tolist(), strict=True):
        frames = chains[k % n_chains]
        merged[(comm_names[k // n_chains], id(frames))] = [frames, p]
    return merged


def periods_by_command(
    stacks: Iterable[ProfileStack], table: StackTable | None = None
) -> dict[tuple[str, int], list[Any]]:
    """The period of the stacks summed per command name and call chain: (comm, id(frames)) -> [frames, period].

    Equal chains share one frames tuple and a command has many threads, so a picture or a text made per
    key is made once per chain and command, not per stack.  The tuples are kept so their ids stay their own.
    ``table``: the stacks' :class:`StackTable`, when the caller has it (summed by number, the same result).
    """
    if table is not None:
        return _by_command_table(table)
    merged: dict[tuple[str, int], list[Any]] = {}
    for s in stacks:
        key = (s.thread.folded_name, id(s.frames))
        slot = merged.get(key)
        if slot is None:
            merged[key] = [s.frames, s.period]
        else:
            slot[1] += s.period
    return merged


@dataclass(slots=True)
class StackCount:
    """How often one thread was sampled in one call chain, and where it was first seen."""

    samples: int
    period: int
    first_line: int
    first_header: str


#: The command name perf prints for a task that exited before perf could read its comm (pid and tid -1).
EXITED_COMM = ":-1"


@dataclass(frozen=True, slots=True)
class Thread:
    """Who was sampled: command name as perf printed it, pid (None when perf printed only the tid), tid.

    ``folded``: the command name stackcollapse-perf.pl gives the thread's samples, where it is not ``comm``: an
    exited task's header (``:-1    -1 [001]  4456.121700:    1001001 cpu-clock:``) is read by its rule with the
    time in the name and the period as the pid; the folded stacks and the flame graph keep its name, the tables
    comm ``:-1``, tid -1 (:attr:`exited`).
    """

    comm: str
    pid: int | None
    tid: int | None
    folded: str | None = None

    @property
    def exited(self) -> bool:
        """A task that exited before perf could read its comm: perf printed comm ``:-1``, tid -1."""
        return self.tid == -1 and self.comm == EXITED_COMM

    @property
    def folded_name(self) -> str:
        """Its command name in the folded stacks (stackcollapse-perf.pl's)."""
        return self.comm if self.folded is None else self.folded


@dataclass(frozen=True, slots=True)
class ProfileStack:
    """A distinct (thread, event, call chain) with its counts; frames from root to leaf."""

    thread: Thread
    event: str
    frames: tuple[ProfileFrame, ...]
    samples: int
    period: int
    first_line: int
    first_header: str


_R = TypeVar("_R")


def made_stacks(count: int, *columns: Iterable[Any]) -> list[ProfileStack]:
    """``count`` :class:`ProfileStack`, from one iterable per field (in the order of the fields).

    The frozen dataclass's ``__init__`` sets each field through ``object.__setattr__``: 1.2 µs a stack,
    0.15 s for the 100k distinct stacks of a busy machine's recording.  Here each field of all the
    stacks is set by one C-level map over its slot's descriptor (half the time); the stacks are the
    same objects as ``__init__`` makes (equal, hashable, frozen).
    """
    return made_records(ProfileStack, count, *columns)


def made_records(cls: type[_R], count: int, *columns: Iterable[Any]) -> list[_R]:
    """``count`` instances of the frozen, slotted dataclass ``cls`` from one iterable per field, in the order of its
    fields (see :func:`made_stacks`): the same objects as its ``__init__`` makes."""
    made = list(map(object.__new__, repeat(cls, count)))
    for f, column in zip(fields(cls), columns, strict=True):  # type: ignore[arg-type]
        deque(map(getattr(cls, f.name).__set__, made, column), maxlen=0)
    return made


class StackColumns(Sequence[ProfileStack]):
    """The stacks a reader counted by number, as columns: a :class:`ProfileStack` made only when one is read.

    A recording of a busy machine has ~100k distinct stacks, and a run's tables, rule classes, folded lines and
    flame graph read their numbers (:class:`StackTable`), not the stacks: only the few a finding or a call path
    cites are read one by one (``stacks[i]``: made by ``one(i)`` then kept, the same object each time).  Iterating
    (or a slice, or comparing) makes them all at once with ``every()``, keeping those made before: a list of the
    same stacks in the same order.  ``events``: the stacks' events; ``first_lines``: their first lines (int64), or
    what gives them when first read (a reader that groups its counters only when the stacks are read).
    """

    __slots__ = ("_all", "_count", "_every", "_first_lines", "_made", "_one", "events")

    def __init__(
        self,
        count: int,
        one: Callable[[int], ProfileStack],
        every: Callable[[], list[ProfileStack]],
        events: frozenset[str],
        first_lines: Any | Callable[[], Any],
    ) -> None:
        self._count = count
        self._one: Callable[[int], ProfileStack] | None = one
        self._every: Callable[[], list[ProfileStack]] | None = every
        self._made: dict[int, ProfileStack] = {}
        self._all: list[ProfileStack] | None = None
        self.events = events
        self._first_lines = first_lines

    @property
    def first_lines(self) -> Any:
        """The stacks' first lines (int64)."""
        if callable(self._first_lines):
            self._first_lines = self._first_lines()
        return self._first_lines

    def __len__(self) -> int:
        return self._count

    @overload
    def __getitem__(self, at: int) -> ProfileStack: ...

    @overload
    def __getitem__(self, at: slice) -> list[ProfileStack]: ...

    def __getitem__(self, at: int | slice) -> ProfileStack | list[ProfileStack]:
        if self._all is not None or isinstance(at, slice):
            return self.made()[at]
        i = index(at)
        if i < 0:
            i += self._count
        if not 0 <= i < self._count:
            raise IndexError("stack index out of range")
        got = self._made.get(i)
        if got is None:
            assert self._one is not None
            got = self._made[i] = self._one(i)
        return got

    @property
    def made_so_far(self) -> int:
        """How many stacks are made."""
        return self._count if self._all is not None else len(self._made)

    def made(self) -> list[ProfileStack]:
        """Every stack, in order (made once; those read before are the same objects)."""
        if self._all is None:
            assert self._every is not None
            every = self._every()
            for i, s in self._made.items():
                every[i] = s
            self._all, self._made, self._one, self._every = every, {}, None, None
        return self._all

    def __iter__(self) -> Iterator[ProfileStack]:
        return iter(self.made())

    def __eq__(self, other: object) -> bool:
        if isinstance(other, StackColumns):
            other = other.made()
        return self.made() == other if isinstance(other, list) else NotImplemented

    __hash__ = None  # type: ignore[assignment]  # as a list's

    def __repr__(self) -> str:
        return f"StackColumns({self._count} stacks, {self.made_so_far} made)"


@dataclass
class Profile:
    """Everything read from one profile input."""

    source: str
    kind: str  # "perf.data", "perf script" or "folded"
    stacks: Sequence[ProfileStack]  # a list, or the reader's StackColumns (large inputs read compiled)
    events: dict[str, int]  # samples per event, in first-seen order
    first_event: str | None
    start: float | None
    end: float | None
    lines: int
    notes: list[str] = field(default_factory=list)
    flat_samples: int = 0  # samples that carried no call chain
    skipped_lines: int = 0
    first_skipped: tuple[int, str] | None = None
    record: SourceRecord | None = None
    # ``stack_table(stacks)``, when the reader made it from its own numbers (large inputs read compiled).
    table: StackTable | None = field(default=None, compare=False, repr=False)
    # Why start..end is not the recording's length (the times step back, or jump over a gap; a note says it).
    span_doubt: str | None = None
    # The first and last time of the samples --window left out (None: it left out none with a time).
    outside_span: tuple[float, float] | None = None
    # The host and kernel release the perf.data header names (``# hostname : vm``), and those header lines.
    host: str | None = None
    kernel_release: str | None = None
    header: tuple[str, ...] = ()
    # The header's ``# cmdline : perf record -g ...`` line: how it was recorded (None: no header, or none there).
    recorded_by: str | None = None
    # The events the header says were recorded (``# event : name = sched:sched_switch, ...``), perf's dummy left out.
    recorded_events: tuple[str, ...] = ()
    # The events named by their tracepoint field, in the order first met (recorded alone, their samples are of
    # event "" in ``events`` and the stacks, unless one was asked for: collectors.perf_script.ScriptParser).
    tracepoints: tuple[str, ...] = ()
    # The line of ``# os release : ...`` in the header text: of ``perf report --header-only -i FILE`` for a perf.data,
    # of the input itself for ``perf script --header`` text (the evidence of the kernel release).
    release_line: int | None = None
    # The line of ``# hostname : ...`` in that header text (the evidence of the host).
    host_line: int | None = None
    # The folded stacks as the reader summed them when asked (``read_profile(folded=True)``; None when it did not):
    # per (command's folded name, the chain's frame names joined by ";") the period of the stacks of the first event,
    # what the folded lines of all its stacks sum (:func:`detectors.profile.hotspots.folded_rows`).
    folded: list[tuple[str, str, int]] | None = field(default=None, compare=False, repr=False)
    # The DSO perf counts each frame in that perf script printed as "(inlined)" with no DSO (INLINED_DSO), by the
    # frame's name, where perf script --no-inline named it (read from perf.data only; a text does not say).
    inlined_dsos: dict[str, str] = field(default_factory=dict, compare=False)
    # The symbol table's name of the symbol holding each of those frames (``pthread_spin_lock@@GLIBC_2.34`` for
    # ``__pthread_spin_lock``), as perf script --no-inline named it: perf annotate -s finds a symbol by that name only.
    inlined_symbols: dict[str, str] = field(default_factory=dict, compare=False)
    # What perf lost while recording (its ring buffer full); None: it said nothing was lost.
    loss: SampleLoss | None = None
    # Where a perf.data file is cut short of what its header announces (None: complete, or not a perf.data).
    cut: PerfDataCut | None = None
    # The host perf script ran on to name a perf.data's frames, from this machine's files (``os.uname().nodename``,
    # as perf records ``# hostname``); None for text, whose frames were named where it was made.
    read_on: str | None = None

    @property
    def recorded_elsewhere(self) -> bool:
        """Whether a perf.data was recorded on another host than the one its frames were named on: its binaries'
        symbols (and kernel's) are that host's, which this machine may not have (review ue19 #10)."""
        return self.host is not None and self.read_on is not None and self.host != self.read_on


@dataclass(frozen=True)
class PerfDataCut:
    """A perf.data file shorter than its header says (perf's ``struct perf_file_header``: the data section's offset
    and size at bytes 40 and 48, written when the recording ends): perf script reads it up to the cut, silently.

    perf writes the feature sections (``# hostname``, ``# os release``, ``# cmdline``) after the data section, so a
    file cut anywhere before its end has lost them: the host and kernel are unknown, not "not named".
    """

    size: int  # the file's bytes
    data_offset: int
    data_size: int  # the data section's bytes the header announces (0: the header was never finished)

    @property
    def announced(self) -> int:
        """The bytes the file ends at by its header (the data section's end; the features follow it)."""
        return self.data_offset + self.data_size

    @property
    def missing_share(self) -> float | None:
        """The percent of the data section (the samples) past the cut; None when the header never said its size."""
        if self.data_size <= 0:
            return None
        return 100.0 * min(self.data_size, max(0, self.announced - self.size)) / self.data_size

    def said(self) -> str:
        """``the file has 3,000,000 of the 8,664,336 bytes its header announces (65.4% of its samples' data is
        missing)``: what is cut, from the header's values."""
        share = self.missing_share
        if share is None:
            return "its header was never finished (perf record interrupted?): how much is missing is unknown"
        return (
            f"the file has {self.size:,} of the {self.announced:,} bytes its header announces ({share:.1f}% of its "
            "samples' data is missing)"
        )


@dataclass(frozen=True)
class SampleLoss:
    """What perf says it lost while recording a perf.data: its ring buffer was full, so the samples of those moments
    were never written (perf's ``Processed N samples and lost P%!``, ``perf report``'s ``Total Lost Samples``).

    Losses come in bursts (a full buffer), so the samples kept are not a fair sample of the time: every share is of
    the samples seen, and may be off by up to the share lost.
    """

    lost: int | None  # the samples lost (PERF_RECORD_LOST_SAMPLES summed; None: perf did not say how many)
    seen: int | None  # the samples perf read (PERF_RECORD_SAMPLE), of which the shares are
    chunks: int | None  # PERF_RECORD_LOST records: the times the ring buffer was found full
    event: str | None  # the event those counts are of (None: of all the recording's events)
    how: str  # where the counts were read (``perf report --stats``, perf script's summary)

    @property
    def share(self) -> float | None:
        """The percent of the samples lost, of those recorded (seen + lost); None when not known."""
        if self.lost is None or self.seen is None or self.lost + self.seen == 0:
            return None
        return 100.0 * self.lost / (self.lost + self.seen)

    def said(self) -> str:
        """``18,343 samples of cpu-clock:ppp (23.62% of 77,643), in 363 chunk(s)``: what was lost."""
        of = f" of {self.event}" if self.event else ""
        share = self.share
        if self.lost is None:
            text = f"samples{of} (how many, perf did not say)"
        else:
            text = f"{self.lost:,} samples{of}"
            if share is not None and self.seen is not None:
                text += f" ({share:.2f}% of {self.lost + self.seen:,})"
        if self.chunks:
            text += f", in {self.chunks:,} chunk(s)"
        return text


@dataclass(frozen=True)
class SymbolDelta:
    """A symbol's self share in the base and the new profile, in percent of each one's period."""

    symbol: str
    base: float
    new: float
    base_samples: int
    new_samples: int

    @property
    def delta(self) -> float:
        """Change in percentage points (positive: it got hotter)."""
        return self.new - self.base


# ---------------------------------------------------------------- the analysis (detectors/profile)


class HotspotRule(NamedTuple):
    """One class of hotspot: how to recognise it, why it matters, what to look at next."""

    name: str
    title: str
    # "leaf": the sampled frame; "stack": any frame of the chain; "irq": any frame, unless the code the chain's
    # first interrupt entry stopped is of a ``keeps_interrupted`` class (detectors/profile/rules.py)
    where: str
    pattern: re.Pattern[str]
    why: str
    next_step: str
    example: tuple[str, ...]  # a call chain, root to leaf, that this rule classes
    # Where the CPU went hurt nobody by itself (info, docs/severity.md); a class that is waste says so (medium).
    severity: Severity = Severity.INFO
    kernel_only: bool = False  # the leaf must be a kernel frame
    # How to read the class instead when one function outside ``pattern`` holds at least half of it: that
    # function's work, not the overhead the class names (a system call class whose time is the call's own work).
    work: HotspotRule | None = None
    # The finding's title names the class's heaviest symbol and the system call of its heaviest stack.
    names_work: bool = False
    # A device interrupt ("irq" rule) that interrupted this class's code stays this class's: its softirq work is the
    # completion of this code's own I/O (dd's blk_done_softirq under generic_perform_write).  A tick or an IPI is
    # not: those rules are "stack" (ue14 finding 7).
    keeps_interrupted: bool = False


@dataclass(frozen=True, slots=True)
class Share:
    """One row of a hotspot table: a key with its period, samples and share of the total period."""

    key: str
    period: int
    samples: int
    share: float  # percent of the total period
    kernel: bool | None = False  # None: samples without a frame (perf printed no call chain), of no space
    dso: str = ""


def sample_at(header: str) -> tuple[float | None, int | None]:
    """The time and CPU perf script prints in a sample's header (``app 10 [001] 361.500123: 1001001 cpu-clock:``;
    no ``[CPU]`` when perf recorded none, a per-process record's): None for what it does not print."""
    import re

    at = re.search(r"(?:^|\s)(?:\[(\d+)\]\s+)?(\d+\.\d{3,9}):(?:\s|$)", header)
    if at is None:
        return None, None
    return float(at.group(2)), int(at.group(1)) if at.group(1) is not None else None


@dataclass(frozen=True)
class CallPath:
    """A call chain (root to leaf) that ends in a hotspot, with its share."""

    frames: tuple[str, ...]
    period: int
    samples: int
    share: float
    first_line: int
    first_header: str


@dataclass(frozen=True)
class SampledEvent:
    """What a profile's samples count (``perf report``'s "Samples: N of event 'E'"): CPU time, where the CPU went
    (cpu-clock, task-clock, cycles), or events of another kind (a tracepoint, page-faults), whose shares are of
    those events (of context switches, of page faults), not of CPU time."""

    name: str  # "" where nothing names it (folded stacks, text without event names)
    unit: (
        str  # what the period counts: "CPU time", or "context switches", "page faults", "irq:irq_handler_entry events"
    )
    cpu_time: bool = True
    named_by: str = ""  # where the name was read when the samples' headers do not name it ("" where they do)
    # What one unit of a CPU-time event's period is: "ns" (cpu-clock, task-clock: perf's software clocks count
    # nanoseconds), "cycles"; "" where not known (folded stacks, events of another kind, whose unit is ``unit``).
    period_unit: str = ""


#: Samples of an event that measures CPU time, or naming none (perf record's default event is CPU time).
CPU_TIME = SampledEvent("", "CPU time")


@dataclass(frozen=True)
class Hotspots:
    """Everything the tables and the rules need."""

    event: str
    total_period: int
    total_samples: int
    self_symbols: tuple[Share, ...]
    total_symbols: tuple[Share, ...]
    dsos: tuple[Share, ...]
    threads: tuple[Share, ...]
    kernel: Share
    user: Share
    paths: dict[str, tuple[CallPath, ...]]  # top self symbol -> its heaviest call paths
    other_events: dict[str, int]
    # The stacks through an [unknown] frame, left out of ``total_symbols``: a caller nobody can name is no hotspot.
    unresolved: Share | None = None
    # The samples perf printed no call chain for: no frame says kernel or user, so they count in neither.
    no_frames: Share | None = None
    # What the samples count: CPU time, or events of another kind (detectors.profile.events).
    sampled: SampledEvent = CPU_TIME


@dataclass(frozen=True)
class ClassShare:
    """How much of the profile one rule classes, and its heaviest stack."""

    rule: HotspotRule
    period: int
    samples: int
    share: float
    heaviest: ProfileStack
    symbols: tuple[tuple[str, int], ...]  # leaf symbols in the class, by period
