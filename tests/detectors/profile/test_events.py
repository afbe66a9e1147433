"""A recording of an event that is not CPU time (a tracepoint, a software event) is told as counts of that event.

The recordings are made now (tests/detectors/profile/glibc_recordings.py): ``perf record -e sched:sched_switch -g``
and ``perf record -e page-faults -g`` of two threads that contend on a mutex.  ``perf report`` shows their shares
as shares of the event ("Samples: N of event 'sched:sched_switch'", "Event count"): the tool must name the event
and its unit, and judge no CPU overhead class by them (a futex wait that switches out is off the CPU).
"""

from __future__ import annotations

import re
import subprocess
from collections import Counter
from pathlib import Path

import pytest

from collectors.perf_script import ScriptParser, find_perf, read_profile
from detectors.profile.events import base_name, sampled_event
from detectors.profile.hotspots import selected_stacks
from forensics.errors import UsageError
from forensics.model import Severity
from forensics.pipelines.profile import analyse_profile
from forensics.pipelines.sources import analyse_profile as source_analysis
from forensics.report.profile import render_tables
from forensics.types.profile_result import ProfileFilters
from tests.detectors.profile.glibc_recordings import RECORDS, perf_report_dsos, record

pytestmark = RECORDS


def _perf_report_event(data: Path) -> str:
    """The event ``perf report`` names for the recording ("# Samples: 55 of event 'sched:sched_switch'")."""
    perf = find_perf()
    assert perf is not None
    out = subprocess.run(
        [perf, "report", "-i", str(data), "--stdio", "--no-children"], capture_output=True, timeout=120, check=True
    ).stdout.decode()
    m = re.search(r"^# Samples: \S+\s+of event '([^']+)'", out, re.M)
    assert m is not None, out[:500]
    return m.group(1)


@pytest.mark.parametrize(
    ("mode", "unit"), [("sched-switch", "context switches"), ("page-faults", "page faults")], ids=["tracepoint", "sw"]
)
def test_a_recording_of_another_event_is_counts_of_that_event_not_cpu_time(
    tmp_path: Path, mode: str, unit: str
) -> None:
    data = record("spin", mode, 0.6)
    result = analyse_profile(str(data))
    hot = result.hot
    assert hot.event == _perf_report_event(data)  # the tracepoint's samples name it only in the header
    assert not hot.sampled.cpu_time and hot.sampled.unit == unit
    # No CPU overhead class judges them, and no finding speaks of CPU time or is a problem.
    assert result.classes == []
    findings = result.incident.findings
    assert findings and not any(f.fact("class") for f in findings)
    assert all(f.severity <= Severity.LOW for f in findings), [(f.title, f.severity) for f in findings]
    assert not any("of CPU" in f.title or "is where the CPU was" in f.summary for f in findings)
    top = next(f for f in findings if f.detector == "profile.hotspots")
    assert f"of {unit} ({hot.event}) sampled in" in top.title, top.title
    # The headline names the event and its unit (perf report's "Samples: N of event 'E'", "Event count").
    tables = render_tables(result, markdown=False, top=5)
    head = tables.splitlines()[0]
    assert "What they mean" not in tables  # the classes' table: of CPU time only
    assert f"samples of {hot.event}, counts of {unit}, not CPU time; event count " in head, head
    (examined,) = result.incident.examined
    assert f"samples of {hot.event} over " in examined.what and "not CPU time" in examined.what, examined.what
    # kforensic report nests its details under a title that is not "CPU profile".
    assert source_analysis(data).title == f"Profile of {hot.event} ({unit}) {data}"


def test_perf_script_text_of_a_tracepoint_is_named_by_its_tracepoint_field(tmp_path: Path) -> None:
    """Plain ``perf script`` text has no header: the sample lines' ``sched:sched_switch:`` field names the event."""
    data = record("spin", "sched-switch", 0.6)
    perf = find_perf()
    assert perf is not None
    text = tmp_path / "sw.perf.txt"
    text.write_bytes(subprocess.run([perf, "script", "-i", str(data)], capture_output=True, check=True).stdout)
    hot = analyse_profile(str(text)).hot
    assert (hot.event, hot.sampled.unit, hot.sampled.cpu_time) == ("sched:sched_switch", "context switches", False)
    assert hot.sampled.named_by == "the samples' tracepoint field"


def test_two_tracepoints_whose_samples_name_neither_are_counted_together_in_no_one_unit(tmp_path: Path) -> None:
    """``-e sched:sched_switch -e sched:sched_wakeup -g``: the samples are read as one event (stackcollapse-perf.pl's
    rule); they were all called context switches (29 switches and 5 wake-ups: "34 ... context switches")."""
    data = record("spin", "sched-two", 0.6)
    hot = analyse_profile(str(data)).hot
    assert (hot.event, hot.sampled.unit, hot.sampled.cpu_time) == (
        "sched:sched_switch, sched:sched_wakeup",
        "events",
        False,
    )
    # perf's own count of the samples, one line each: perf report's "# Samples: 1K of event" rounds from 1,000 on
    # (the CI's run of 2026-12-07 read 672 of 2,664).
    counts = _perf_counts(data)
    assert set(counts) == {"sched:sched_switch", "sched:sched_wakeup"}, counts
    assert hot.total_samples == sum(counts.values()), (hot.total_samples, counts)


def _perf_counts(data: Path) -> Counter[str]:
    """perf's own count of the samples of each event (``perf script -F event``: one line each)."""
    perf = find_perf()
    assert perf is not None
    out = subprocess.run(
        [perf, "script", "-i", str(data), "-F", "event"], capture_output=True, timeout=120, check=True
    ).stdout.decode()
    return Counter(line.strip().rstrip(":") for line in out.splitlines() if line.strip())


def test_a_tracepoint_recorded_with_cpu_clock_is_another_event_left_out(tmp_path: Path) -> None:
    """``perf record -e sched:sched_switch -e cpu-clock -g`` (review ue6 #5): a tracepoint sample's line ends with its
    payload, which names no event by stackcollapse-perf.pl's rule, and its samples were counted as cpu-clock's ("8,995
    samples of cpu-clock" for 7,936), in every table.  They are another event, left out and said, whichever reading
    path reads them and though a sched_switch sample comes first; the cpu-clock shares are perf report's."""
    data = record("spin", "sched-cpu", 0.6)
    counts = _perf_counts(data)
    assert set(counts) == {"cpu-clock", "sched:sched_switch"}, counts
    perf = find_perf()
    assert perf is not None
    text = subprocess.run([perf, "script", "-i", str(data)], capture_output=True, timeout=120, check=True).stdout
    script = tmp_path / "mix.perf.txt"
    script.write_bytes(text)

    def fed(parser: ScriptParser, chunk: int) -> object:
        for at in range(0, len(text), chunk):
            parser.feed(text[at : at + chunk])
        return parser.close()

    profiles = {
        "perf.data": read_profile(str(data)),
        "text": read_profile(str(script)),
        "per sample (--window)": read_profile(str(script), window=(0.0, 1e12)),
        "counted, small chunks": fed(ScriptParser("x"), 4096),
        "numpy": fed(ScriptParser("x", bulk=True, scanner=None), 4096),
    }
    for how, profile in profiles.items():
        assert profile.first_event == "cpu-clock", (how, profile.events)
        assert profile.events["cpu-clock"] == counts["cpu-clock"], (how, profile.events, counts)
        # (a sample of a task that exited before perf read its comm, ":-1 -1 ...", is a line the rule cannot read)
        switches = profile.events["sched:sched_switch"]
        assert counts["sched:sched_switch"] - profile.skipped_lines <= switches <= counts["sched:sched_switch"], how
        note = next(n for n in profile.notes if n.startswith("several events"))
        assert f"cpu-clock (sched:sched_switch: {switches} samples left out)" in note, (how, note)
        stacks = selected_stacks(profile)
        assert {s.event for s in stacks} == {"cpu-clock"}, how
        assert sum(s.samples for s in stacks) == counts["cpu-clock"], how
    result = analyse_profile(str(data))
    hot = result.hot
    assert (hot.event, hot.total_samples, hot.sampled.cpu_time) == ("cpu-clock", counts["cpu-clock"], True)
    head = render_tables(result, markdown=False, top=5).splitlines()[0]
    assert f": {counts['cpu-clock']:,} samples of cpu-clock, period " in head, head
    # ... and what was examined names the event counted, the others left out (it named all three for cpu-clock's)
    (examined,) = result.incident.examined
    assert f"{counts['cpu-clock']:,} samples of cpu-clock (left out: sched:sched_switch)" in examined.what, examined
    # The shares of the DSOs are perf report's of cpu-clock (to its rounding; a sample or two perf names no frame of
    # may land elsewhere).
    want = perf_report_dsos(data, "cpu-clock")
    got = {Path(row.key).name if row.key.startswith("/") else row.key: row.share for row in hot.dsos}
    for dso, share in want.items():
        if share >= 1.0:
            assert abs(got.get(dso, 0.0) - share) < 0.3, (dso, got, want)


def test_a_tracepoint_met_first_is_left_out_whatever_fields_perf_printed(tmp_path: Path) -> None:
    """``perf script -F comm,tid,time,event,ip,sym,dso`` prints no payload after a tracepoint's event (review ue8 #10):
    its line ends as an ordinary event's (``sh 4382 74681.4: sched:sched_process_exec: ``).  Met first, it was the
    event analysed (102 exec samples for 2,150 of cpu-clock); it is a tracepoint all the same, left out."""
    data = record("spin", "exec-cpu", 0.3)
    counts = _perf_counts(data)
    assert set(counts) == {"cpu-clock", "sched:sched_process_exec"}, counts
    perf = find_perf()
    assert perf is not None
    fields = "comm,tid,time,event,ip,sym,dso"
    text = subprocess.run(
        [perf, "script", "-i", str(data), "-F", fields], capture_output=True, timeout=120, check=True
    ).stdout
    assert re.match(rb"\S+\s+\d+\s+[\d.]+: sched:sched_process_exec: *\n", text), text[:200]  # met first, bare
    script = tmp_path / "fields.perf.txt"
    script.write_bytes(text)
    parsers = {"counted": ScriptParser("x"), "numpy": ScriptParser("x", bulk=True, scanner=None)}
    for parser in parsers.values():
        for at in range(0, len(text), 4096):
            parser.feed(text[at : at + 4096])
    profiles = {"text": read_profile(str(script)), **{how: p.close() for how, p in parsers.items()}}
    for how, profile in profiles.items():
        assert profile.first_event == "cpu-clock", (how, profile.events)
        assert profile.events == {"sched:sched_process_exec": 1, "cpu-clock": counts["cpu-clock"]}, how
        note = next(n for n in profile.notes if n.startswith("several events"))
        assert note.endswith("cpu-clock (sched:sched_process_exec: 1 samples left out)"), (how, note)
        assert sum(s.samples for s in selected_stacks(profile)) == counts["cpu-clock"], how


def test_tracepoints_recorded_without_call_chains_beside_cpu_clock_are_events_left_out(tmp_path: Path) -> None:
    """``perf record -e sched:sched_process_exec -e sched:sched_switch -e cpu-clock`` without -g (review ue8 #11): a
    tracepoint's line (``sh 8124 [001] 74900.9: sched:sched_switch: prev_comm=sh ...``) carries no address.  Its
    samples were "lines that are not perf script samples", and all of them when the first line was one; they are
    samples of their event, left out beside cpu-clock and said, as with -g."""
    data = record("spin", "exec-cpu-flat", 0.3)
    counts = _perf_counts(data)
    assert {"cpu-clock", "sched:sched_process_exec"} <= set(counts), counts
    perf = find_perf()
    assert perf is not None
    text = subprocess.run([perf, "script", "-i", str(data)], capture_output=True, timeout=120, check=True).stdout
    # The case: the first line is a tracepoint's, with no address.  Mostly the exec's; on a loaded machine the
    # workload can be switched out between perf enabling its events at the exec and the exec's tracepoint, and a
    # sched_switch comes first (a make test run of 2026-12-07): a tracepoint's line all the same.
    first = text.split(b"\n", 1)[0]
    assert re.search(rb"\d: +sched:sched_(?:process_exec|switch): ", first), text[:200]
    script = tmp_path / "flat.perf.txt"
    script.write_bytes(text)
    parser = ScriptParser("x")
    for at in range(0, len(text), 4096):
        parser.feed(text[at : at + 4096])
    profiles = {
        "perf.data": read_profile(str(data)),
        "text": read_profile(str(script)),
        "per sample (--window)": read_profile(str(script), window=(0.0, 1e12)),
        "small chunks": parser.close(),
    }
    others = [e for e in counts if e != "cpu-clock"]
    for how, profile in profiles.items():
        assert (profile.first_event, profile.skipped_lines) == ("cpu-clock", 0), (how, profile.notes)
        assert profile.events == dict(counts), (how, profile.events, counts)
        note = next(n for n in profile.notes if n.startswith("several events"))
        left = ", ".join(f"{e}: {profile.events[e]} samples" for e in profile.events if e != "cpu-clock")
        assert note.endswith(f"cpu-clock ({left} left out)") and len(others) == left.count(" samples"), (how, note)
        stacks = selected_stacks(profile)
        assert sum(s.samples for s in stacks) == counts["cpu-clock"] and all(len(s.frames) == 1 for s in stacks), how
        # The samples without a call chain are counted of the event analysed: it said the three events' sum.
        flat = next(n for n in profile.notes if "carry no call chain" in n)
        assert flat.startswith(f"{counts['cpu-clock']} samples carry no call chain (recorded without -g)"), (how, flat)
    # ... and of the event --event picks.
    for name in (str(data), str(script)):
        result = analyse_profile(name, ProfileFilters(event="sched:sched_process_exec"))
        flat = next(n for n in result.profile.notes if "carry no call chain" in n)
        assert flat.startswith(f"{counts['sched:sched_process_exec']} samples carry no call chain"), (name, flat)


def test_event_picks_a_tracepoint_of_a_recording_of_tracepoints_only(tmp_path: Path) -> None:
    """``--event`` picks any event the input has (review ue8 #17): in ``-e sched:sched_switch -e sched:sched_wakeup
    -g`` the two are counted as one event by default, yet ``--event sched:sched_wakeup`` had "no samples" and the
    hint listed no event."""
    data = record("spin", "sched-two", 0.3)
    counts = _perf_counts(data)
    assert set(counts) == {"sched:sched_switch", "sched:sched_wakeup"}, counts
    perf = find_perf()
    assert perf is not None
    script = tmp_path / "two.perf.txt"
    script.write_bytes(
        subprocess.run([perf, "script", "-i", str(data)], capture_output=True, timeout=120, check=True).stdout
    )
    for name in (str(data), str(script)):
        for event in counts:
            result = analyse_profile(name, ProfileFilters(event=event))
            assert (result.hot.event, result.hot.total_samples) == (event, counts[event]), (name, event)
            (other,) = set(counts) - {event}
            assert f"--event {event}: left out {other}" in result.profile.notes, result.profile.notes
        with pytest.raises(UsageError) as refused:
            analyse_profile(name, ProfileFilters(event="sched:nosuch"))
        # (in the order first met)
        hint = refused.value.hint or ""
        assert hint.startswith("its events: ") and sorted(hint[12:].split(", ")) == sorted(counts), hint
        # Without --event, counted together as before.
        assert analyse_profile(name).hot.total_samples == sum(counts.values())


def test_a_cpu_recording_stays_cpu_time(tmp_path: Path) -> None:
    """``perf record -g -F 999`` (cycles or cpu-clock, with perf's modifiers): the classes judge it as before."""
    result = analyse_profile(str(record("spin", "fp", 0.6)))
    assert result.hot.sampled.cpu_time and result.hot.sampled.unit == "CPU time"
    assert any(f.fact("class") == "user-spin" for f in result.incident.findings)
    assert "What they mean" in render_tables(result, markdown=False, top=5)


@pytest.mark.parametrize(
    ("event", "cpu_time", "unit"),
    [
        ("cycles:ppp", True, "CPU time"),
        ("cpu-clock:ppp", True, "CPU time"),
        ("cpu_core/cycles/P", True, "CPU time"),
        ("task-clock", True, "CPU time"),
        ("sched:sched_switch", False, "context switches"),
        ("major-faults:u", False, "major page faults"),
        ("irq:irq_handler_entry", False, "irq:irq_handler_entry events"),
        ("instructions", False, "instructions"),
    ],
)
def test_what_an_event_counts(event: str, cpu_time: bool, unit: str) -> None:
    got = sampled_event(event)
    assert (got.name, got.cpu_time, got.unit) == (event, cpu_time, unit)


def test_an_unnamed_event_is_named_by_the_header_or_stays_cpu_time() -> None:
    assert sampled_event("", ("sched:sched_switch",)).unit == "context switches"
    assert sampled_event("").cpu_time  # folded stacks: perf record's default event
    assert sampled_event("", ("cycles", "sched:sched_switch")).cpu_time  # several: not one answer
    # Several tracepoints whose samples name none: counted together, in no one unit (not "context switches").
    both = sampled_event("", ("sched:sched_switch", "sched:sched_wakeup"))
    assert (both.name, both.unit, both.cpu_time) == ("sched:sched_switch, sched:sched_wakeup", "events", False)
    assert base_name("sched:sched_switch") == "sched:sched_switch" and base_name("cycles:u") == "cycles"


def test_a_cpu_time_period_says_its_unit() -> None:
    """The header's "period 7,973,947,832" of cpu-clock said no unit (ue24 note): perf's software clocks count
    nanoseconds, said with the seconds they make; a cycle counter's period is cycles; folded stacks name no unit."""
    assert (sampled_event("cpu-clock:ppp").period_unit, sampled_event("cycles:P").period_unit) == ("ns", "cycles")
    assert sampled_event("").period_unit == "" and sampled_event("page-faults").period_unit == ""
    data = record("spin", "fp", 0.6)  # perf record -g -F 999: cpu-clock where the machine has no PMU, else cycles
    result = analyse_profile(str(data))
    head = render_tables(result, markdown=False, top=5).splitlines()[0]
    period = result.hot.total_period
    if result.hot.sampled.period_unit == "ns":
        assert f"period {period:,} ns ({period / 1e9:,.3f} s of CPU time)" in head, head
    else:
        assert f"period {period:,} {result.hot.sampled.period_unit}," in head, head
