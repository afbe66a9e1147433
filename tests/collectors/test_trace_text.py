"""The streaming trace reader: every layout, odd comms, lost events, bad input, chunking."""

from __future__ import annotations

import gzip

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from collectors.trace_text import TraceParser
from forensics.types.trace import Kind, TraceEvent
from tests.detectors.sched.traces import DATA, LAYOUTS, scenario_text


def parse(text: str | bytes, chunk: int | None = None) -> tuple[list[TraceEvent], TraceParser]:
    data = text.encode() if isinstance(text, str) else text
    parser = TraceParser()
    events: list[TraceEvent] = []
    step = chunk or max(1, len(data))
    for i in range(0, len(data), step):
        events += parser.feed(data[i : i + step])
    events += parser.finish()
    return events, parser


SWITCH_KERNEL = (
    "prev_comm=Web Content prev_pid=7 prev_prio=120 prev_state=D ==> next_comm=kworker/1:0H next_pid=24 next_prio=100"
)


@pytest.mark.parametrize(
    ("line", "cpu"),
    [
        (f"     Web Content-7       [003] d..2.   10.000001: sched_switch: {SWITCH_KERNEL}", 3),
        (f"     Web Content-7       [003] d..2   10.000001: sched_switch: {SWITCH_KERNEL}", 3),
        (f"     Web Content-7       [003] dNh2..1   10.000001: sched_switch: {SWITCH_KERNEL}", 3),
        (f"     Web Content-7       [003]   10.000001: sched_switch: {SWITCH_KERNEL}", 3),
        (f"     Web Content-7       (      7) [003] d..2.   10.000001: sched_switch: {SWITCH_KERNEL}", 3),
        (f"           <...>-7       [012] d..2.   10.000001: sched_switch: {SWITCH_KERNEL}", 12),
        (f"Web Cont-7     12d..2.   10.000001: sched_switch:         {SWITCH_KERNEL}", 12),
        (f"inst:     Web Content-7     [003]   10.000001: sched_switch:         {SWITCH_KERNEL}", 3),
        (f"     Web Content     7 [003]    10.000001:   sched:sched_switch: {SWITCH_KERNEL}", 3),
        (
            "     Web Content-7     [003]   10.000001: sched_switch:         "
            "Web Content:7 [120] D ==> kworker/1:0H:24 [100]",
            3,
        ),
    ],
)
def test_sched_switch_in_every_layout(line: str, cpu: int) -> None:
    (ev,), parser = parse(line + "\n")
    assert (ev.kind, ev.cpu, ev.ts, ev.line_no) == (Kind.SWITCH, cpu, 10.000001, 1)
    assert (ev.comm, ev.pid, ev.prio, ev.state) == (b"Web Content", 7, 120, b"D")
    assert (ev.next_comm, ev.next_pid, ev.next_prio) == (b"kworker/1:0H", 24, 100)
    assert parser.counts.malformed == 0


@pytest.mark.parametrize(
    ("plugin_state", "kernel_state"), [("W", b"I"), ("X", b"Z"), ("S", b"S"), ("R+", b"R+"), ("D", b"D")]
)
def test_trace_cmd_plugin_state_letters_are_normalised(plugin_state: str, kernel_state: bytes) -> None:
    line = f"  a-1 [000]   1.000000: sched_switch:         a:1 [120] {plugin_state} ==> b:2 [120]\n"
    (ev,), _ = parse(line)
    assert ev.state == kernel_state


@pytest.mark.parametrize(
    "payload",
    [
        "comm=rt task pid=200 prio=49 target_cpu=001",
        "comm=rt task pid=200 prio=49 success=1 target_cpu=001",
        "rt task:200 [49] CPU:001",
        "rt task:200 [49] success=1 CPU:001",
    ],
)
def test_wakeup_with_and_without_success(payload: str) -> None:
    (ev,), _ = parse(f"  a-1 [000] d..2.   1.000000: sched_wakeup: {payload}\n")
    assert (ev.kind, ev.comm, ev.pid, ev.prio, ev.next_pid) == (Kind.WAKEUP, b"rt task", 200, 49, 1)


def test_wakeup_after_waking_is_read_for_its_cpu_and_skipped_only_when_asked() -> None:
    """The sched_wakeup after a sched_waking tells the CPU the task was queued on (the waking's target_cpu is the
    one it last ran on): it is read (it was skipped, and a wait queued elsewhere "moved at an unknown time")."""
    text = (
        "  a-1 [000] d..2.   1.000000: sched_wakeup: comm=b pid=2 prio=120 target_cpu=000\n"
        "  a-1 [000] d..2.   1.000001: sched_waking: comm=b pid=2 prio=120 target_cpu=000\n"
        "  a-1 [000] d..2.   1.000002: sched_wakeup: comm=b pid=2 prio=120 target_cpu=001\n"
    )
    events, parser = parse(text)
    assert [e.kind for e in events] == [Kind.WAKEUP, Kind.WAKING, Kind.WAKEUP]
    assert events[-1].next_pid == 1 and parser.counts.events == 3
    skipping = TraceParser(skip_wakeup_after_waking=True)
    assert [e.kind for e in skipping.feed(text.encode()) + skipping.finish()] == [Kind.WAKEUP, Kind.WAKING]
    assert skipping.counts.events == 3


def test_irq_softirq_work_and_vectors() -> None:
    text = (
        "  a-1 [001] d.h1.   1.000000: irq_handler_entry: irq=36 name=virtio1-req.0\n"
        "  a-1 [001] d.h1.   1.000004: irq_handler_exit: irq=36 ret=handled\n"
        "  a-1 [001] d.h1.   1.000005: local_timer_entry: vector=236\n"
        "  a-1 [001] ..s1.   1.000006: softirq_raise: vec=9 [action=RCU]\n"
        "  k-2 [001] .....   1.000007: workqueue_execute_start: work struct 0xffff888: function blk_mq_run_work_fn\n"
    )
    events, _ = parse(text)
    assert [(e.kind, e.pid, e.state) for e in events] == [
        (Kind.IRQ_ENTRY, 36, b"virtio1-req.0"),
        (Kind.IRQ_EXIT, 36, b""),
        (Kind.IRQ_ENTRY, -236, b"local_timer"),
        (Kind.SOFTIRQ_RAISE, 9, b""),
        (Kind.WORK_START, 0, b"blk_mq_run_work_fn"),
    ]
    assert events[-1].comm == b"0xffff888"


def test_headers_lost_markers_and_unknown_events_are_counted() -> None:
    text = (
        "# tracer: nop\n#\n# entries-in-buffer/entries-written: 5/9   #P:4\n"
        "##### CPU 2 buffer started ####\n"
        "  a-1 [000] d..2.   1.000000: hrtimer_start: hrtimer=1 function=f\n"
        "CPU:2 [LOST 17 EVENTS]\n"
        "  a-1 [000] d..2.   1.000001: sched_process_exit: comm=a pid=1 prio=120 group_dead=true\n"
    )
    events, parser = parse(text)
    c = parser.counts
    assert (c.cpus_declared, c.tracer, c.lost_markers, c.lost_events) == (4, "nop", 1, 17)
    assert c.unknown == {b"hrtimer_start": 1} and c.comments == 4 and c.malformed == 0
    assert [(e.kind, e.cpu, e.pid) for e in events] == [(Kind.LOST, 2, 17), (Kind.PROCESS_EXIT, 0, 1)]


def test_sched_migrate_task_is_an_event_with_both_cpus() -> None:
    """sched_migrate_task was an unknown event (counted by name only): now a record whose ``next_pid`` is the CPU
    the task moved to and ``next_prio`` the one it left; a comm with spaces ends at the last " pid="; a payload
    without dest_cpu is malformed."""
    text = (
        "  migration/1-21 [001] d..4.   1.000000: sched_migrate_task: comm=wl sleeper pid=6055 prio=120 orig_cpu=1 "
        "dest_cpu=0\n"
        "  bash-7 [000] d..2.   1.000001: sched:sched_migrate_task:   comm=bash pid=7 prio=98 orig_cpu=0 dest_cpu=3\n"
        "  bash-7 [000] d..2.   1.000002: sched_migrate_task: comm=bash pid=7 prio=98 orig_cpu=0\n"
    )
    events, parser = parse(text)
    got = [(e.kind, e.cpu, e.pid, e.prio, e.comm, e.next_pid, e.next_prio) for e in events]
    assert got == [
        (Kind.MIGRATE, 1, 6055, 120, b"wl sleeper", 0, 1),
        (Kind.MIGRATE, 0, 7, 98, b"bash", 3, 0),
    ]
    assert parser.counts.unknown == {} and parser.counts.malformed == 1


@pytest.mark.parametrize(
    ("marker", "cpu", "lost"),
    [
        ("CPU:2 [LOST 17 EVENTS]", 2, 17),
        ("CPU:3 [123 EVENTS DROPPED]", 3, 123),
        ("CPU 1 [LOST EVENTS]", 1, 0),
        ("          python 25458 [003]  2227.341619: PERF_RECORD_LOST lost 71", 3, 71),  # perf --show-lost-events
    ],
)
def test_lost_event_markers(marker: str, cpu: int, lost: int) -> None:
    (ev,), parser = parse(marker + "\n")
    assert (ev.kind, ev.cpu, ev.pid) == (Kind.LOST, cpu, lost)
    assert parser.counts.lost_markers == 1 and parser.counts.lost_events == lost


def test_bad_input_is_counted_never_raised() -> None:
    text = (
        b"\x00\xff\xfegarbage\n"
        b"  a-1 [000] d..2.   1.000000: sched_switch: prev_comm=a prev_pid=1 prev_prio=120 prev_st\n"  # truncated
        b"  a-1 [0x0] d..2.   1.000000: sched_switch: a:1 [120] S ==> b:2 [120]\n"  # bad CPU
        b"  a-1 [000] d..2.   nan-ish: sched_waking: comm=b pid=2\n"
        b"  a-1 [000] d..2.   1.000001: sched_waking: comm=b pid=x prio=1 target_cpu=0\n"
        b"  a-1 [000] d..2.   1.000002: sched_switch: prev_comm=a prev_pid=1 prev_prio=120 prev_state=S ==> "
        b"next_comm=b next_pid=2 next_prio=120"  # the last line has no newline
    )
    events, parser = parse(text)
    assert [e.ts for e in events] == [1.000002]
    assert parser.counts.malformed == 5 and parser.counts.lines == 6
    assert parser.counts.first_malformed[0][0] == 1


def test_function_tracer_lines_are_other_events() -> None:
    events, parser = parse("            bash-12      [001] ...1.   200.002000: vfs_write <-ksys_write\n")
    assert events == [] and parser.counts.unknown == {b"(function)": 1} and parser.counts.malformed == 0


def test_empty_input() -> None:
    events, parser = parse(b"")
    assert events == [] and parser.counts.lines == 0 and parser.counts.events == 0


@pytest.mark.parametrize("layout", LAYOUTS)
def test_layouts_give_the_same_events(layout: str) -> None:
    def key(e: TraceEvent) -> tuple[object, ...]:
        return (e.kind, e.ts, e.cpu, e.pid, e.prio, e.comm, e.state, e.next_pid, e.next_prio, e.next_comm)

    reference, _ = parse(scenario_text("ftrace"))
    events, parser = parse(scenario_text(layout))
    assert list(map(key, events)) == list(map(key, reference))
    assert parser.counts.layout == ("fused" if layout == "tc-l" else "bracket")


@settings(max_examples=60, deadline=None)
@given(cuts=st.lists(st.integers(min_value=1, max_value=4000), min_size=1, max_size=12))
def test_chunk_boundaries_do_not_matter(cuts: list[int]) -> None:
    data = scenario_text("tc-l").encode()
    whole, _ = parse(data)
    parser = TraceParser()
    events: list[TraceEvent] = []
    pos = 0
    for cut in sorted(set(cuts)):
        events += parser.feed(data[pos:cut])
        pos = max(pos, cut)
    events += parser.feed(data[pos:]) + parser.finish()
    assert events == whole


@settings(max_examples=200, deadline=None)
@given(data=st.binary(max_size=600) | st.text(alphabet=" -[]():.=>0123456789abdNhs_\n", max_size=600))
def test_fuzz_never_raises(data: bytes | str) -> None:
    events, parser = parse(data, chunk=37)
    counts = parser.counts
    raw = data.encode() if isinstance(data, str) else data
    assert counts.lines == raw.count(b"\n") + (0 if raw.endswith(b"\n") or not raw else 1)
    assert counts.used == len(events) - sum(1 for e in events if e.kind == Kind.LOST)


@settings(max_examples=100, deadline=None)
@given(
    line_no=st.integers(min_value=0, max_value=40),
    cut=st.integers(min_value=0, max_value=200),
)
def test_fuzz_truncated_lines_of_a_real_layout(line_no: int, cut: int) -> None:
    lines = scenario_text("ftrace").splitlines()
    line_no %= len(lines)
    lines[line_no] = lines[line_no][:cut]
    events, parser = parse("\n".join(lines) + "\n")
    assert len(events) + parser.counts.malformed + parser.counts.comments + sum(parser.counts.unknown.values()) >= (
        len(lines) - 2
    )


def test_an_endless_line_is_dropped_with_bounded_memory() -> None:
    from collectors.trace_text import MAX_LINE

    parser = TraceParser()
    events: list[TraceEvent] = []
    for _ in range(5):
        events += parser.feed(b"x" * MAX_LINE)
        assert len(parser._tail) <= MAX_LINE
    good = b"  a-1 [000] d..2.   1.000000: sched_waking: comm=b pid=2 prio=120 target_cpu=000\n"
    events += parser.feed(b"tail of the garbage\n" + good) + parser.finish()
    assert [(e.kind, e.line_no) for e in events] == [(Kind.WAKING, 2)]
    assert parser.counts.malformed == 1 and parser.counts.lines == 2


def _strip_instances(text: bytes) -> bytes:
    """``text`` without trace-cmd's instance prefixes (``  kf_irq2: ``): what a one-buffer report prints."""
    return b"\n".join(
        line.split(b": ", 1)[1] if line.split(b":", 1)[0].strip().startswith(b"kf") else line
        for line in text.split(b"\n")
    )


def _key(events: list[TraceEvent]) -> list[tuple[int, float, int, int, bytes]]:
    return [(e.kind, e.ts, e.cpu, e.pid, e.comm) for e in events]


@pytest.mark.parametrize("prefix", [b"trace1:", b"inst0:", b"ue15:", b"a:1:", b"42:", b"  7:"])
def test_an_instance_name_may_end_in_a_digit(prefix: bytes) -> None:
    """The recorded trace-cmd report of a ``-B kforensic_rec`` buffer, its instance renamed: a name ending in a digit
    was taken for the timestamp (every line malformed: "242,128 of 242,128 lines are not trace events")."""
    text = gzip.decompress((DATA / "kf.tc-report.txt.gz").read_bytes())
    events, parser = parse(text)
    renamed, renamed_parser = parse(text.replace(b"kforensic_rec:", prefix))
    assert renamed_parser.counts.malformed == parser.counts.malformed == 0
    assert _key(renamed) == _key(events) and len(events) > 1000


def test_several_instances_of_a_real_recording() -> None:
    """record-instances.sh: two instances named with a final digit, one report; trace-cmd prefixes every line with its
    (padded) instance, its drop marker too ("kf_sched1: CPU:1 [372 EVENTS DROPPED]"), but not the line after it."""
    text = gzip.decompress((DATA / "kf.tc-report-B2.txt.gz").read_bytes())
    assert b"\n  kf_irq2: " in text and b"\nkf_sched1: CPU:1 [372 EVENTS DROPPED]\n            bash-" in text
    events, parser = parse(text)
    c = parser.counts
    assert (c.malformed, c.lost_markers, c.lost_events, c.comments) == (0, 1, 372, 1)
    assert [(e.cpu, e.pid, e.line_no) for e in events if e.kind == Kind.LOST] == [(1, 372, 499)]
    plain, plain_parser = parse(_strip_instances(text))
    assert _key(events) == _key(plain) and plain_parser.counts.malformed == 0
    assert c.events == text.count(b"\n") - 2  # every line but "cpus=2" and the marker is an event
    assert {e.kind for e in events} >= {Kind.SWITCH, Kind.WAKING, Kind.IRQ_ENTRY, Kind.SOFTIRQ_ENTRY}
