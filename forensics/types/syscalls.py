"""Syscall latency of an LTTng kernel session: per syscall name, its entry-to-exit durations (what Trace Compass's
"System Call Latency" analysis gives), and what could not be paired.  Built by collectors/ctf/syscall_latency.py."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from forensics.model import StreamEvent


@dataclass(frozen=True)
class SyscallCall:
    """One syscall, entry to exit: the thread in it (tid; ``comm`` from the scheduling analysis, "" if unknown),
    the CPU it entered on and exited on, its times (seconds, trace clock) and both events' positions in the session
    (collectors.ctf.reader.Session.position: TraceResult.events names them as babeltrace2 finds them, at rendering:
    each naming decodes a packet again, and the text shows only the top rows)."""

    tid: int  # -1: no sched_switch named the thread running on its CPU (paired on that CPU)
    comm: str
    cpu: int
    exit_cpu: int
    start: float
    end: float
    entry_at: int
    exit_at: int

    @property
    def duration(self) -> float:
        return self.end - self.start


@dataclass(frozen=True)
class SyscallStats:
    """Every measured call of one syscall name (seconds)."""

    name: str
    count: int
    total: float
    worst: SyscallCall

    @property
    def mean(self) -> float:
        return self.total / self.count


@dataclass(frozen=True)
class SyscallLatency:
    """The table (worst first) and what was read but not measured."""

    stats: tuple[SyscallStats, ...]
    paired: int  # calls measured (the sum of the counts)
    open_at_end: int  # entries whose thread was still in the syscall when the trace (or its reading) ended
    began_inside: int  # exits that are the first syscall event of their thread: the trace began inside the call
    unpaired_exits: int  # exits after another exit of their thread (the entry between was not recorded)
    unpaired_entries: int  # entries followed by another entry of their thread (the exit between was not recorded)
    across_loss: int  # pairs with events lost (discarded, lost packets) on their CPUs between entry and exit
    mismatched: int  # entry and exit of different syscall names (an exit and entry lost between them)
    unknown_thread: int  # events on a CPU no sched_switch had named the running thread of: paired on the CPU
    thread_exits: int = 0  # entries of exit / exit_group: the thread ended there (no exit to pair)


def name_calls(
    stats: Sequence[SyscallStats], named: Callable[[int], StreamEvent | None] | None
) -> dict[int, StreamEvent | None]:
    """The entry and exit events of each worst call, named in the order of the session (each naming decodes its
    packet again, and the session keeps the last few: in time order one decode per packet)."""
    if named is None:
        return {}
    positions = sorted({p for st in stats for p in (st.worst.entry_at, st.worst.exit_at)})
    return {p: named(p) for p in positions}
