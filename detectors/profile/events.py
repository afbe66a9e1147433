"""What a profile's samples count: CPU time, or events of another kind.

``perf record -g`` samples CPU time (cycles, or cpu-clock where there is no PMU): a share of its samples is a share
of where the CPU went, and the overhead classes (lock contention, page faults, syscalls) judge it.  A recording of
a tracepoint or a software event (``perf record -e sched:sched_switch -g``, ``-e page-faults``) takes one sample per
event (or per N events): ``perf report`` shows its shares as shares of that event's count ("Samples: 2K of event
'sched:sched_switch'", "Event count"), and a share says where the events happen, not where the CPU was.  A task
that blocks often in futex_wait has many context switches and is off the CPU while it waits.

The event's name comes from the samples' headers (``... 1001001 cpu-clock:``); a tracepoint's sample line ends with
its payload (``... 62329.6: sched:sched_switch: prev_comm=...``), which names no event by the reader's rule
(``stackcollapse-perf.pl``'s).  Beside another event the reader keeps such samples apart by their tracepoint field
(collectors.perf_script); in a recording of tracepoints only they name none: the name then comes from the perf.data
header (``# event : name = ...``) when it names one event, or from the sample line's tracepoint field.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from forensics.types.profile import CPU_TIME, SampledEvent

#: Events whose samples measure CPU time (perf list: the hardware cycle counters and the software clocks).
CPU_TIME_EVENTS = frozenset({"cycles", "cpu-cycles", "ref-cycles", "cpu-clock", "task-clock", "bus-cycles"})
#: What one unit of a CPU-time event's period is (perf's software clocks count nanoseconds, the PMU's counters
#: their cycles): "period 7,973,947,832" of cpu-clock said no unit (ue24 note).
PERIOD_UNITS = {
    "cycles": "cycles",
    "cpu-cycles": "cycles",
    "ref-cycles": "reference cycles",
    "bus-cycles": "bus cycles",
    "cpu-clock": "ns",
    "task-clock": "ns",
}
#: What one unit of an event's count is, for the events people record with -g (perf list's software events and
#: the tracepoints that stand for them); any other event's unit is "NAME events".
EVENT_UNITS = {
    "sched:sched_switch": "context switches",
    "context-switches": "context switches",
    "cs": "context switches",
    "page-faults": "page faults",
    "faults": "page faults",
    "minor-faults": "minor page faults",
    "major-faults": "major page faults",
    "exceptions:page_fault_user": "page faults",
    "exceptions:page_fault_kernel": "page faults",
    "cpu-migrations": "CPU migrations",
    "migrations": "CPU migrations",
    "sched:sched_wakeup": "wake-ups",
    "sched:sched_waking": "wake-ups",
    "instructions": "instructions",
    "cache-misses": "cache misses",
    "cache-references": "cache references",
    "branch-misses": "branch misses",
    "branches": "branches",
    "block:block_rq_issue": "block requests issued",
    "syscalls:sys_enter": "system calls",
    "raw_syscalls:sys_enter": "system calls",
}
#: perf's event modifiers after a colon (``cycles:ppp``, ``cpu-clock:u``, ``dummy:HG``): not part of the name.
_MODIFIERS = re.compile(r"[ukhIGHpPSDWebRX]+")  # perf's parse-events.l modifier_event (R, X: newer perf)
#: A PMU event (``cpu/cycles/``, ``cpu_core/cycles/ppp``): the event between the slashes.
_PMU = re.compile(r"^\w+/([\w.-]+)(?:,[^/]*)?/")
#: The tracepoint of a sample line that ends with its payload: after the time (and a period, when printed), a
#: ``subsystem:event:`` field followed by more text.
_TRACEPOINT = re.compile(r"\d\.\d+:\s+(?:\d+\s+)?([A-Za-z_]\w*:[A-Za-z_]\w*):\s+\S")


def base_name(event: str) -> str:
    """The event without perf's modifiers or PMU: ``cycles:ppp`` -> ``cycles``, ``cpu_core/cycles/`` -> ``cycles``;
    a tracepoint (``sched:sched_switch``) keeps its subsystem."""
    pmu = _PMU.match(event)
    if pmu is not None:
        return pmu.group(1)
    name, colon, mods = event.rpartition(":")
    return name if colon and _MODIFIERS.fullmatch(mods) else event


def sampled_event(named: str, recorded: Iterable[str] = (), first_headers: Iterable[str] = ()) -> SampledEvent:
    """What the samples of event ``named`` (the samples' own name of it; "" where their headers name none) count.

    ``recorded``: the events the perf.data header names (``# event : name = ...``, perf's dummy left out);
    ``first_headers``: sample header lines, whose tracepoint field names the event of a text with no header.
    """
    by = ""
    if not named:
        events = tuple(recorded)
        if len(events) == 1:
            named, by = events[0], "the perf.data header (# event : name = ...)"
        elif events and not any(base_name(e) in CPU_TIME_EVENTS for e in events):
            # Tracepoints whose samples name none of them (their payload ends the line): counted as one event, as
            # stackcollapse-perf.pl counts them; no one unit (29 context switches and 5 wake-ups were said
            # "34 context switches").
            return SampledEvent(", ".join(events), "events", False, "the perf.data header (# event : name = ...)")
        else:
            found = list(dict.fromkeys(m.group(1) for h in first_headers if (m := _TRACEPOINT.search(h)) is not None))
            if not found:
                return CPU_TIME  # folded stacks, text without event names: perf record's default, CPU time
            if len(found) > 1:
                return SampledEvent(", ".join(found), "events", False, "the samples' tracepoint fields")
            named, by = found[0], "the samples' tracepoint field"
    base = base_name(named)
    if base in CPU_TIME_EVENTS:
        return SampledEvent(named, "CPU time", True, by, PERIOD_UNITS[base])
    return SampledEvent(named, EVENT_UNITS.get(base, f"{named} events"), False, by)


__all__ = ["CPU_TIME_EVENTS", "EVENT_UNITS", "base_name", "sampled_event"]
