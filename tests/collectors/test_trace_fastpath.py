"""The reader ``kforensic trace`` uses (compiled scanner + line parser) gives exactly what the line parser gives."""

from __future__ import annotations

from dataclasses import asdict

from hypothesis import given, settings
from hypothesis import strategies as st

from collectors.trace_columns import BatchParser
from collectors.trace_text import TraceParser
from forensics.types.trace import TraceEvent

HEADER = b"# tracer: nop\n#\n# entries-in-buffer/entries-written: 9/9   #P:2\n#\n"
FIRST = b"            bash-1       [000] d..2.   1.000000: sched_wakeup_new: comm=bash pid=2 prio=120 target_cpu=000"

comms = st.sampled_from([b"bash", b"Web Content", b"kworker/1:0H", b"a: b", b"x[1]", b"<...>", b"", b"#c", b"c\r"])
numbers = st.sampled_from([b"0", b"7", b"120", b"-1", b"00042", b"x", b""])
states = st.sampled_from([b"R", b"R+", b"S", b"D", b"I", b"Z", b"X", b"", b"W|K"])
cpus = st.sampled_from([b"000", b"001", b"12", b"003", b"", b"0x1"])
flags = st.sampled_from([b"d..2.", b"dNh2..1", b"", b"d..2", b".....", b"1:2", b"[x]"])
stamps = st.sampled_from([b"1.000001", b"10.5", b"436.795975", b"4.000001", b"2", b"3.x"])


# The strategies of trace_line's pieces, built once: built in each draw, hypothesis validated them anew each time.
_WAKEUPS = st.sampled_from([b"sched_wakeup", b"sched_wakeup_new", b"sched_wakeup_x"])
_TIMERS = st.sampled_from([b"hrtimer_start: hrtimer=0000 expires=1", b"softirq_entry: vec=9 [action=RCU]"])
_ODD_NAMES = st.sampled_from(
    [b"irq_handler_entry: irq=5 name=eth0", b"sched:sched_wakeup: x", b"odd name: x", b"a_b:x", b"a:b: x"]
)
_OTHER_LINES = st.sampled_from(
    [
        b"CPU:1 [LOST 42 EVENTS]",
        b"# latency: 10 us",
        b"",
        b"   ",
        b"garbage: line",
        b"  inst0: CPU:1 [7 EVENTS DROPPED]",
        b"          python 25458 [000]  2227.341619: PERF_RECORD_LOST lost 71",
    ]
)
# trace-cmd's -B instance prefixes: a name may end in digits, hold colons, be all digits (not a timestamp: first).
_PREFIXES = st.sampled_from(
    [b"", b"", b"", b"#", b"inst: ", b"trace1: ", b"  ue15: ", b"a:1: ", b"42: ", b"  42: ", b"1.5: "]
)
_SUFFIXES = st.sampled_from([b"", b"", b"", b" ", b"\r", b" extra=1"])


@st.composite
def trace_line(draw: st.DrawFn) -> bytes:
    """A tracefs-like line: mostly well formed, with the variations and damage real files have."""
    head_comm = draw(comms)
    head = b"%16s-%-7s [%s] %s %12s: " % (head_comm, draw(numbers), draw(cpus), draw(flags), draw(stamps))
    kind = draw(st.integers(0, 7))
    if kind == 0:
        payload = (
            b"sched_switch: prev_comm=%s prev_pid=%s prev_prio=%s prev_state=%s ==> next_comm=%s next_pid=%s "
            % (
                draw(comms),
                draw(numbers),
                draw(numbers),
                draw(states),
                draw(comms),
                draw(numbers),
            )
            + b"next_prio="
            + draw(numbers)
        )
    elif kind == 1:
        payload = b"sched_waking: comm=%s pid=%s prio=%s target_cpu=%s" % (
            draw(comms),
            draw(numbers),
            draw(numbers),
            draw(numbers),
        )
    elif kind == 2:
        payload = b"%s: comm=%s pid=%s prio=%s target_cpu=%s" % (
            draw(_WAKEUPS),
            draw(comms),
            draw(numbers),
            draw(numbers),
            draw(numbers),
        )
    elif kind == 3:
        payload = b"sched_switch: %s:%s [120] %s ==> %s:%s [120]" % (
            draw(comms),
            draw(numbers),
            draw(states),
            draw(comms),
            draw(numbers),
        )
    elif kind == 4:
        payload = draw(_TIMERS)
    elif kind == 5:
        payload = draw(_ODD_NAMES)
    elif kind == 6:
        return draw(_OTHER_LINES)
    else:
        payload = b"sched_process_exit: comm=%s pid=%s prio=120" % (draw(comms), draw(numbers))
    line = draw(_PREFIXES) + head + payload
    if draw(st.integers(0, 3)) == 0:  # a truncated line
        return line[: draw(st.integers(0, len(line)))]
    return line + draw(_SUFFIXES)


def parse_both(data: bytes, chunk: int, skip: bool = False) -> tuple[tuple[list[TraceEvent], dict[str, object]], ...]:
    """Events and counts from the batch reader fed in chunks, and from the line-by-line parser alone (``skip``:
    both skip the sched_wakeup lines after a sched_waking)."""
    fast = BatchParser(skip_wakeup_after_waking=skip)
    events: list[TraceEvent] = []
    for batch in [fast.feed_batch(data[i : i + chunk]) for i in range(0, len(data), chunk)] + [fast.finish_batch()]:
        events += [batch.event(i) for i in range(len(batch))]
    slow = TraceParser(skip_wakeup_after_waking=skip)
    slow_events = slow._parse_lines(data.removesuffix(b"\n").split(b"\n"))
    return (events, asdict(fast.counts)), (slow_events, asdict(slow.counts))


@settings(max_examples=400, deadline=None)
@given(st.lists(trace_line(), min_size=1, max_size=40), st.integers(16, 4096), st.booleans(), st.booleans())
def test_fast_path_equals_the_line_parser(lines: list[bytes], chunk: int, waking: bool, skip: bool) -> None:
    if not waking:  # a trace with sched_wakeup only: those are read, not skipped
        lines = [line for line in lines if b"sched_waking" not in line]
    data = HEADER + FIRST + b"\n" + b"\n".join(lines) + b"\n"
    fast, slow = parse_both(data, chunk, skip)
    assert fast == slow


def test_wakeup_lines_are_read_fast_without_waking_and_skipped_after_it() -> None:
    """A trace without sched_waking keeps its sched_wakeup events; after the first waking they are read too (where
    the task was queued), and only counted when the parsers are asked to skip them."""
    wakeup = b"            bash-1       [001] d..2.   1.%06d: sched_wakeup: comm=cc1 pid=3 prio=120 target_cpu=001"
    waking = b"            bash-1       [001] d..2.   1.%06d: sched_waking: comm=cc1 pid=3 prio=120 target_cpu=001"
    lines = [wakeup % i for i in range(1, 4)] + [waking % 4] + [wakeup % i for i in range(5, 8)]
    data = HEADER + FIRST + b"\n" + b"\n".join(lines) + b"\n"
    (events, counts), slow = parse_both(data, 1 << 20)
    assert (events, counts) == slow
    assert [e.kind for e in events] == [4, 3, 3, 3, 2, 3, 3, 3]
    assert counts["events"] == 8 and counts["used"] == 8
    (events, counts), slow = parse_both(data, 1 << 20, skip=True)
    assert (events, counts) == slow
    assert [e.kind for e in events] == [4, 3, 3, 3, 2]
    assert [e.line_no for e in events[1:]] == [6, 7, 8, 9]
    assert counts["events"] == 8 and counts["used"] == 5


def test_fast_path_reads_the_common_lines() -> None:
    """The lines of a raw tracefs capture are read with the right fields."""
    body = (
        b"            bash-1       [001] d..2.   1.000001: sched_waking: comm=cc1 pid=3 prio=120 target_cpu=001\n"
        b"            bash-1       [001] d..2.   1.000002: sched_wakeup: comm=cc1 pid=3 prio=120 target_cpu=001\n"
        b"            bash-1       [001] d..2.   1.000003: sched_switch: prev_comm=bash prev_pid=1 prev_prio=120 "
        b"prev_state=R+ ==> next_comm=cc1 next_pid=3 next_prio=-1\n"
        b"            bash-1       [001] d..2.   1.000004: hrtimer_start: hrtimer=1\n"
    )
    (events, counts), slow = parse_both(HEADER + FIRST + b"\n" + body, 1 << 20)
    assert (events, counts) == slow
    waking, wakeup, switch = events[1:]
    assert (wakeup.kind, wakeup.pid, wakeup.next_pid) == (3, 3, 1)
    assert (waking.kind, waking.ts, waking.cpu, waking.line_no, waking.pid, waking.comm, waking.next_pid) == (
        2,
        1.000001,
        1,
        6,
        3,
        b"cc1",
        1,
    )
    assert (switch.pid, switch.state, switch.next_pid, switch.next_prio, switch.next_comm) == (1, b"R+", 3, -1, b"cc1")
    assert switch.line == body.split(b"\n")[2]
    assert counts["events"] == 5 and counts["used"] == 4 and counts["unknown"] == {b"hrtimer_start": 1}
