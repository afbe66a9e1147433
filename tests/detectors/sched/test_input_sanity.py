"""Traces whose clock goes back or whose CPUs stop reporting: said, never turned into confident figures (issue 19).

The traces are the recorded ``kf.ftrace.txt`` (a 0.24 s trace of 2 CPUs) damaged the
way real files get damaged: one timestamp pushed 0.5 s ahead (a jump back after it), the
lines in reverse order (``tac``), the events of one CPU cut off halfway.  Each is analysed
by the reference (SchedAnalyzer on the line parser's records) and by the compiled path
(what the command runs); both must say the same.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path

import pytest

from collectors.trace_text import TraceParser
from detectors.sched.analyzer import SchedAnalyzer
from detectors.sched.findings import detect
from forensics.model import Finding, Severity
from forensics.types.sched import TraceAnalysis
from tests.detectors.sched.traces import analyse_path, recorded
from tests.helpers import Ran, assert_evidence_resolves, cli_run

_TS = re.compile(r"(\s)(\d+\.\d{6})(: )")


@pytest.fixture
def kf(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> Callable[..., Ran]:
    """``kforensic ARGS`` in this process, through the CLI's real entry (tests.helpers.cli_run): what the table
    says of these traces is this file's subject, the trace command as a process test_trace_cli's (a process's
    start-up and imports ~0.2 s of CPU a run, issue #28)."""

    def invoke(*args: str | Path) -> Ran:
        return cli_run(monkeypatch, capsys, *args)

    return invoke


def _lines(tmp: Path) -> tuple[list[str], list[str]]:
    text = recorded("kf.ftrace.txt", tmp).read_text()
    lines = text.splitlines()
    head = [line for line in lines if line.startswith("#")]
    return head, [line for line in lines if not line.startswith("#")]


def _ts(line: str) -> float:
    m = _TS.search(line)
    assert m, line
    return float(m.group(2))


def _shift(line: str, delta: float) -> str:
    return _TS.sub(lambda m: f"{m.group(1)}{float(m.group(2)) + delta:.6f}{m.group(3)}", line, count=1)


def _write(tmp: Path, name: str, head: list[str], body: list[str]) -> Path:
    path = tmp / name
    path.write_text("\n".join([*head, *body]) + "\n")
    return path


def _reference(path: Path) -> TraceAnalysis:
    parser = TraceParser()
    ref = SchedAnalyzer()
    ref.feed(parser.feed(path.read_bytes()))
    ref.feed(parser.finish())
    return ref.result(parser.counts)


def _both(path: Path) -> tuple[TraceAnalysis, list[Finding]]:
    """The analysis (reference and compiled agree) and the findings."""
    fast, _counts = analyse_path(path, chunk=1 << 12)
    assert repr(fast) == repr(_reference(path))
    findings = detect(fast, str(path))
    # Every finding's severity names what it was judged against, the input checks' too (a clock step, a jump, a hole,
    # a silent CPU: they named none until 2026-12-07, as info findings elsewhere did, ue15 #13).
    assert [f.title for f in findings if f.baseline is None] == []
    return fast, findings


def _durations_ms(findings: list[Finding]) -> list[float]:
    return [float(m) for f in findings for m in re.findall(r"([\d.]+) ms", f.title)]


def test_a_timestamp_jumping_ahead_is_not_a_500ms_hog_or_irq(tmp_path: Path, kf: Callable[..., Ran]) -> None:
    head, body = _lines(tmp_path)
    mid = len(body) // 2
    switch = next(i for i in range(mid, len(body)) if "[001]" in body[i] and "sched_switch" in body[i])
    irq_exit = next(i for i, line in enumerate(body) if "irq_handler_exit" in line)
    for i in (switch, irq_exit):
        body[i] = _shift(body[i], 0.5)
    path = _write(tmp_path, "jump.txt", head, body)
    analysis, findings = _both(path)
    assert analysis.clock.back >= 2
    assert max(_durations_ms(findings)) < 400, [f.title for f in findings]
    clock = [f for f in findings if f.kind == "trace-clock"]
    assert len(clock) == 1
    cited = {(e.locator.start, e.cpu) for e in clock[0].evidence}
    assert (len(head) + switch + 1, 1) in cited  # the line whose time jumped ahead, on CPU1
    assert "not reported" in clock[0].summary  # the figures that spanned the jump are named
    assert_evidence_resolves(findings)
    # The tables still hold those figures: each is marked as spanning the step.
    table = kf("trace", path, "--format", "md")
    assert table.returncode in (0, 1), table.stderr
    rows = "\n".join(line for line in table.stdout.splitlines() if line.startswith("|"))
    big = re.findall(r"5\d\d\.\d{3} ms( †)?", rows)
    assert big and all(big), big
    assert "clock: 2 of" in table.stdout


@pytest.mark.parametrize("chunk", [1 << 8, 1 << 16])
def test_the_whole_trace_jumping_an_hour_ahead_is_flagged_not_an_hour_long_hog(
    tmp_path: Path, chunk: int, kf: Callable[..., Ran]
) -> None:
    """A suspend or a clock set forward mid-recording: every CPU silent for an hour, then events again."""
    head, body = _lines(tmp_path)
    mid = len(body) // 2
    body = body[:mid] + [_shift(line, 3600.0) for line in body[mid:]]
    path = _write(tmp_path, "suspend.txt", head, body)
    fast, _counts = analyse_path(path, chunk=chunk)
    assert fast.clock == _reference(path).clock
    analysis, findings = _both(path)
    assert analysis.clock.back == 0 and len(analysis.clock.jumps) == 1
    jump = analysis.clock.jumps[0]
    assert (jump.before.line_no, jump.after.line_no) == (len(head) + mid, len(head) + mid + 1)
    assert max(_durations_ms(findings)) < 1000, [f.title for f in findings]  # no hour-long run, IRQ or wait
    clock = [f for f in findings if f.kind == "trace-clock"]
    assert len(clock) == 1 and "jumps forward" in clock[0].title and "not reported" in clock[0].summary
    assert_evidence_resolves(findings)
    table = kf("trace", path, "--format", "md")
    assert table.returncode in (0, 1), table.stderr
    assert "clock: the trace jumps forward 1 times" in table.stdout
    rows = "\n".join(line for line in table.stdout.splitlines() if line.startswith("|"))
    hour = re.findall(r"36\d\d\d\d\d\.\d{3} ms( †)?", rows)
    assert hour and all(hour), hour  # the totals that include the silence are marked


def test_a_reversed_trace_says_so(tmp_path: Path, kf: Callable[..., Ran]) -> None:
    head, body = _lines(tmp_path)
    path = _write(tmp_path, "reversed.txt", head, body[::-1])
    analysis, findings = _both(path)
    assert analysis.clock.back > analysis.clock.steps // 2
    clock = [f for f in findings if f.kind == "trace-clock"]
    assert len(clock) == 1 and "reverse order" in clock[0].title
    assert not analysis.coverage.stopped  # first and last events are swapped: no CPU "stops"
    assert_evidence_resolves(findings)
    result = kf("trace", path, "--format", "json")
    assert result.returncode in (0, 1), result.stderr
    doc = json.loads(result.stdout)
    assert any(f["kind"] == "trace-clock" for f in doc["incident"]["findings"])


def test_a_cpu_that_stops_halfway_is_a_coverage_note_and_drops_what_spans_it(
    tmp_path: Path, kf: Callable[..., Ran]
) -> None:
    head, body = _lines(tmp_path)
    t0, t1 = _ts(body[0]), _ts(body[-1])
    cut = (t0 + t1) / 2
    kept = [line for line in body if "[000]" not in line or _ts(line) <= cut]
    path = _write(tmp_path, "cpu0-stops.txt", head, kept)
    analysis, findings = _both(path)
    assert [ref.cpu for ref in analysis.coverage.stopped] == [0]
    assert "CPU0" in analysis.coverage.note and "stop" in analysis.coverage.note
    stop = analysis.coverage.stopped[0].ts
    coverage = [f for f in findings if f.kind == "trace-coverage" and "stop" in f.title]
    assert len(coverage) == 1 and coverage[0].evidence[0].cpu == 0
    assert coverage[0].title == "CPU0 stops reporting before the trace ends"  # 'CPU0, CPU2 stop …' for several
    late = [
        f
        for f in findings
        if f.kind.startswith("sched-")
        and any(e.timestamp is not None and e.timestamp.seconds > stop + 1e-3 for e in f.evidence)
    ]
    assert not late, "a figure next to a coverage gap is not a finding"
    assert "not reported" in coverage[0].summary  # the figures it holds back are named there
    assert_evidence_resolves(findings)
    # Unlike leak-coverage, it sets --fail-on low's exit: the figures it holds back may be real waits.  It is
    # the one kind of finding at low or above here, so the exit is its own.
    assert coverage[0].severity == Severity.LOW
    assert {f.kind for f in findings if f.severity >= Severity.LOW} == {"trace-coverage"}
    assert kf("trace", path, "--format", "json", "--fail-on", "low").returncode == 1


def test_a_cpu_whose_buffer_was_overwritten_drops_what_began_before_its_first_event(tmp_path: Path) -> None:
    """An overwritten ring buffer keeps a CPU's latest events only: a wait that began before them is not a finding.

    On this machine a tracefs instance of 256 KB per CPU read after 10 s of load kept CPU1 from 4.1 s into the
    trace only, and a kworker woken for CPU1 before then "waited 892.908 ms" (medium, 74 times the CFS period):
    it may have run on CPU1 unseen.  Here kf.ftrace.txt without CPU1's first half: it gave three such waits
    (kworker/u8:2 147.983 ms, rcu_preempt 112.013 ms, qemu-system-x86 56.024 ms) the intact trace has not.
    """
    head, body = _lines(tmp_path)
    t0, t1 = _ts(body[0]), _ts(body[-1])
    cut = (t0 + t1) / 2
    kept = [line for line in body if "[001]" not in line or _ts(line) >= cut]
    written = head[2].replace(f"{len(body)}/{len(body)}", f"{len(kept)}/{len(body)}")  # as tracefs says it
    assert written != head[2]
    path = _write(tmp_path, "cpu1-overwritten.txt", [*head[:2], written, *head[3:]], kept)
    analysis, findings = _both(path)
    first = next(ref for ref in analysis.coverage.started if ref.cpu == 1)
    assert first.ts >= cut and "[001]" in first.text
    early = [
        f.title
        for f in findings
        if f.kind.startswith("sched-")
        and min(e.timestamp.seconds for e in f.evidence if e.timestamp is not None) < first.ts - 1e-3
    ]
    assert early == [], "a figure begun before a CPU's first event is not a finding"
    (late,) = [f for f in findings if f.kind == "trace-coverage"]
    assert late.title == "CPU1 starts reporting after the trace begins" and late.evidence[0].cpu == 1
    assert late.evidence[0].locator.start == first.line_no and "not reported" in late.summary
    assert "kworker/u8:2 waited 147.983 ms" in late.summary  # the figures it holds back are named there
    intact = {f.title for f in detect(_both(recorded("kf.ftrace.txt", tmp_path))[0], "kf.ftrace.txt")}
    assert {f.title for f in findings if f.severity >= Severity.MEDIUM} <= intact  # the real ones stay
    assert_evidence_resolves(findings)


def test_an_intact_trace_has_no_input_findings(tmp_path: Path) -> None:
    analysis, findings = _both(recorded("kf.ftrace.txt", tmp_path))
    assert analysis.clock.back == 0 and not analysis.coverage.stopped and not analysis.clock.jumps
    assert not [f for f in findings if f.kind in ("trace-clock", "trace-coverage")]


@pytest.mark.parametrize("chunk", [1 << 8, 1 << 16])
def test_clock_check_is_the_same_in_any_chunking(tmp_path: Path, chunk: int) -> None:
    head, body = _lines(tmp_path)
    body = body[: len(body) // 3] + body[len(body) // 3 :][::-1]
    path = _write(tmp_path, "half-reversed.txt", head, body)
    fast, _counts = analyse_path(path, chunk=chunk)
    assert fast.clock == _reference(path).clock
    assert fast.clock.back > 0 and fast.clock.disputed


def test_a_cpu_silent_for_its_last_milliseconds_is_a_note_not_a_finding(tmp_path: Path) -> None:
    """A CPU silent at the end of a trace (idle, or one task running on) is common on a healthy machine: the
    coverage note says so, but a finding only when a figure reaches past its last event.

    This VM's own 7.5 s trace of two busy CPUs (a tracefs instance, sched events) ended with CPU1 silent for
    12.461 ms and nothing held back: it was a low "CPU1 stops reporting before the trace ends" all the same.
    Here kf.ftrace.txt with a timer tick on CPU0 3 ms after its end: CPU1 is silent for those 3 ms.
    """
    head, body = _lines(tmp_path)
    at = _ts(body[-1]) + 3e-3
    tick = [
        f"       record.sh-15845   [000] d.h..   {at:.6f}: local_timer_entry: vector=236",
        f"       record.sh-15845   [000] d.h..   {at + 4e-6:.6f}: local_timer_exit: vector=236",
    ]
    path = _write(tmp_path, "cpu1-quiet-end.txt", head, [*body, *tick])
    analysis, findings = _both(path)
    # CPU1's last switch put a task on it, nothing lost: it ran it to the end (ue21 #2), no longer "stops"
    assert [r.cpu for r in analysis.coverage.running] == [1] and "CPU1" in analysis.coverage.note
    assert not [f for f in findings if f.kind == "trace-coverage"]
    intact = {f.title for f in detect(_both(recorded("kf.ftrace.txt", tmp_path))[0], "kf.ftrace.txt")}
    assert {f.title for f in findings} == intact  # no figure reached past CPU1's last event


@pytest.mark.parametrize("chunk", [1 << 8, 1 << 16])
def test_a_silent_hole_in_a_busy_recording_is_not_counted(tmp_path: Path, chunk: int, kf: Callable[..., Ran]) -> None:
    """Review 7 D: 1.5 s cut out of a recording that writes ~10,000 events a second, a task running on each
    CPU: a hole, not a 1-s run or wait.  Nothing that spans it is counted, the coverage says where it is."""
    head, body = _lines(tmp_path)
    mid = 1200  # past HOLE_MIN_EVENTS; both CPUs run a task there
    body = body[:mid] + [_shift(line, 1.5) for line in body[mid:]]
    path = _write(tmp_path, "hole.txt", head, body)
    fast, _counts = analyse_path(path, chunk=chunk)
    assert fast.clock == _reference(path).clock
    analysis, findings = _both(path)
    assert len(analysis.clock.holes) == 1 and analysis.clock.holes == analysis.clock.jumps
    hole = analysis.clock.holes[0]  # from the latest event before it (the CPUs' lines interleave) to the next
    assert hole.before.line_no <= len(head) + mid and hole.after.line_no == len(head) + mid + 1
    assert max(_durations_ms(findings)) < 1000, [f.title for f in findings]  # no 1.5-s run, IRQ or wait
    assert [f.title for f in findings if f.kind == "trace-clock"] == [
        "1 hole(s) in the recording (longest 1.500 s with no event on any CPU)"
    ]
    assert_evidence_resolves(findings)
    table = kf("trace", path)
    assert table.returncode in (0, 1), table.stderr
    assert "a hole in the recording; nothing that spans it is counted" in " ".join(table.stdout.split())


def test_the_same_silence_early_in_the_trace_is_a_quiet_spell(tmp_path: Path) -> None:
    """Before HOLE_MIN_EVENTS events the trace has no rate of its own to judge a silence by: it is not a hole."""
    head, body = _lines(tmp_path)
    body = body[:300] + [_shift(line, 1.5) for line in body[300:]]
    analysis, _findings = _both(_write(tmp_path, "early.txt", head, body))
    assert not analysis.clock.holes and not analysis.clock.jumps


@pytest.mark.parametrize("chunk", [1 << 8, 1 << 16])
def test_a_silence_in_a_trace_without_tick_events_is_a_run_not_a_hole(tmp_path: Path, chunk: int) -> None:
    """The hole rule's own trace with its interrupt, softirq and timer events left out (a trace of sched_switch and
    sched_wakeup alone, the most common recording): a running CPU writes nothing while its task runs alone, so the
    1.5 s silence is that task's run, a hog to report, not a hole (the lead's review of review 7 D's fix)."""
    head, body = _lines(tmp_path)
    body = [line for line in body if re.search(r" (sched_\w+|sched_process_\w+): ", line)]
    mid = 1000  # past HOLE_MIN_EVENTS still
    body = body[:mid] + [_shift(line, 1.5) for line in body[mid:]]
    path = _write(tmp_path, "sched-only.txt", head, body)
    fast, _counts = analyse_path(path, chunk=chunk)
    assert fast.clock == _reference(path).clock
    analysis, findings = _both(path)
    assert not analysis.clock.holes and not analysis.clock.jumps
    assert max(_durations_ms(findings)) > 1000, [f.title for f in findings]  # the run across the silence is told


def _cpu(line: str) -> int:
    m = re.search(r"\[(\d{3})\]", line)
    assert m, line
    return int(m.group(1))


@pytest.mark.parametrize("chunk", [1 << 8, 1 << 16])
@pytest.mark.parametrize("where", ["start", "end"])
def test_a_wait_across_lost_events_is_unknown_not_measured(
    tmp_path: Path, where: str, chunk: int, kf: Callable[..., Ran]
) -> None:
    """Review 7 E: CPU1's events of 80 ms replaced by one lost-events marker, printed where the loss begins (as the
    review wrote it) or, as tracefs and trace-cmd print it, before the CPU's next event.  Its figures (a wakeup
    onto CPU1 switched in on CPU0 104 ms later) are unknown, cited with the loss, and drive no severity."""
    head, body = _lines(tmp_path)
    t0 = _ts(body[0])
    cut = [i for i, line in enumerate(body) if _cpu(line) == 1 and t0 + 0.08 <= _ts(line) < t0 + 0.16]
    after = next(i for i in range(cut[-1] + 1, len(body)) if _cpu(body[i]) == 1)
    at = cut[0] if where == "start" else after
    kept = [line for i, line in enumerate(body) if i not in set(cut)]
    marker = kept.index(body[cut[0] - 1]) + 1 if where == "start" else kept.index(body[after])
    kept.insert(marker, "CPU:1 [LOST 900 EVENTS]")
    path = _write(tmp_path, f"lost-{where}.txt", head, kept)
    assert at
    fast, _counts = analyse_path(path, chunk=chunk)
    assert fast.clock == _reference(path).clock
    analysis, findings = _both(path)
    (loss,) = analysis.clock.losses
    assert (loss.cpu, loss.events) == (1, 900)
    assert loss.before is not None and loss.after is not None
    last = max(i for i in range(cut[0]) if _cpu(body[i]) == 1)  # CPU1's last event before the loss
    assert (loss.before.ts, loss.after.ts) == (_ts(body[last]), _ts(body[after]))
    for f in findings:
        if f.kind != "trace-coverage":
            times = [e.timestamp.seconds for e in f.evidence if e.timestamp is not None]
            assert not times or not analysis.clock.lost_in(min(times), max(times)), f.title
    unknown = [f for f in findings if f.kind == "trace-coverage" and "unknown" in f.summary]
    if where == "start":
        assert unknown and "unknown: CPU1 lost 900 events between line" in unknown[0].summary
        assert "rcu_preempt waited 104.010 ms" in unknown[0].summary  # named as not measured, not a finding
        # ... yet counted in its task's wakeup total (it began after the marker): the coverage note must not say
        # that nothing across a loss is counted, and says which totals are not exact
        rcu = next(t for t in analysis.tasks if t.comm == "rcu_preempt")
        assert rcu.worst_wakeup is not None and rcu.wakeup.total >= rcu.worst_wakeup.span.duration > 0.1
        note = analysis.coverage.note
        assert "no interval spanning a loss is counted" not in note
        assert "the wait and sleep totals (wakeup latency, preemption wait, S and D time)" in note, note
    assert_evidence_resolves(findings)
    table = kf("trace", path)
    assert table.returncode in (0, 1), table.stderr
    assert "CPU1 lost 900 events between line" in " ".join(table.stdout.split())


def _cpu1_lost(
    tmp: Path, body: list[str], span: tuple[float, float], where: str, events: int, chunk: int
) -> tuple[TraceAnalysis, list[Finding], Path]:
    """``body`` with CPU1's events of ``span`` cut and one lost-events marker printed where the loss begins
    (``where`` "start") or before CPU1's next event, as tracefs and trace-cmd print it; its analysis (the reference
    and the compiled path at batch size ``chunk`` agree) and findings."""
    head, _ = _lines(tmp)
    cut = [i for i, line in enumerate(body) if _cpu(line) == 1 and span[0] <= _ts(line) < span[1]]
    after = next(i for i in range(cut[-1] + 1, len(body)) if _cpu(body[i]) == 1)
    kept = [line for i, line in enumerate(body) if i not in set(cut)]
    marker = kept.index(body[cut[0] - 1]) + 1 if where == "start" else kept.index(body[after])
    kept.insert(marker, f"CPU:1 [LOST {events} EVENTS]")
    path = _write(tmp, f"lost-{span[0]}-{where}.txt", head, kept)
    fast, _counts = analyse_path(path, chunk=chunk)
    assert fast.clock == _reference(path).clock
    analysis, findings = _both(path)
    return analysis, findings, path


@pytest.mark.parametrize("chunk", [1 << 8, 1 << 16])
@pytest.mark.parametrize("where", ["start", "end"])
def test_a_loss_makes_unknown_only_what_depended_on_its_cpu(
    tmp_path: Path, where: str, chunk: int, kf: Callable[..., Ran]
) -> None:
    """CPU1's events cut for 30 ms while kf_hog ran 12.035 ms on CPU0 (a run seen whole there: a running task
    leaves its CPU only through a sched_switch of that CPU, and CPU0 lost nothing): the run is measured and its
    finding kept.  A wait over that time (qemu-system-x86 woken while kf_hog ran) stays unknown on every CPU: a
    waiting task may have been moved to CPU1 and run there unseen.  Before, a loss of any CPU dropped both."""
    _head, body = _lines(tmp_path)
    analysis, findings, path = _cpu1_lost(tmp_path, body, (797.715, 797.745), where, 300, chunk)
    (loss,) = analysis.clock.losses
    hog = next(t for t in analysis.tasks if t.comm == "kf_hog")
    longest = hog.runs.worst
    assert longest is not None and longest.cpu == 0 and round(longest.duration * 1e3, 3) == 12.035
    assert (
        loss.cpu == 1 and loss.start < longest.start < longest.start + longest.duration < loss.end
    )  # inside CPU1's loss
    assert analysis.clock.lost_in(longest.start, longest.start + longest.duration)  # of any CPU: the rule before
    titles = [f.title for f in findings]
    assert "Long run: kf_hog ran 12.035 ms on CPU0; others waited within their fair share" in titles, titles
    assert not analysis.clock.lost_in(longest.start, longest.start + longest.duration, {0})
    (unknown,) = [f for f in findings if f.kind == "trace-coverage" and "unknown" in f.title]
    dropped = unknown.summary.split("Not measured: ")[1]
    assert "kf_hog ran" not in dropped and re.search(r"Wakeup latency: \S+ waited [\d.]+ ms to run", dropped)
    if where == "end":  # (where the marker stands moves the barrier, so which waits are counted at all)
        # woken onto CPU1, switched in on CPU0: when it moved is not in the trace, so no culprit (ue15 #3)
        assert "Wakeup latency: qemu-system-x86 waited 26.767 ms to run (woken onto CPU1, ran on CPU0)" in dropped
    for f in findings:  # a kept wait or sleep overlaps no loss; a kept run, handler or softirq none of its CPU
        times = [e.timestamp.seconds for e in f.evidence if e.timestamp is not None]
        if f.kind in ("sched-wakeup-latency", "sched-dstate"):
            assert not analysis.clock.lost_in(min(times), max(times)), f.title
    assert_evidence_resolves(findings)
    table = kf("trace", path, "--format", "md")
    assert table.returncode in (0, 1), table.stderr
    row = next(line for line in table.stdout.splitlines() if line.startswith("| kf_hog |"))
    assert "12.035 ms @797.720130 CPU0" in row and "†" not in row.split("|")[6], row  # its run: not marked
    if where == "end":
        qemu = next(line for line in table.stdout.splitlines() if "26.767 ms" in line)
        assert "26.767 ms †" in qemu  # the wait across the loss is
    assert "lost events: figures marked † overlap a loss" in table.stdout


@pytest.mark.parametrize("chunk", [1 << 8, 1 << 16])
@pytest.mark.parametrize("where", ["start", "end"])
def test_a_cpu_that_lost_nothing_keeps_its_totals_across_another_cpus_loss(
    tmp_path: Path, where: str, chunk: int
) -> None:
    """CPU1's events of 797.700-797.725 cut, its marker read while kf_hog runs 12.035 ms on CPU0 (797.720130 to
    797.732165): a run open on CPU0 at CPU1's marker is seen whole there and counted, so CPU0's busy, idle, IRQ and
    softirq time are those of the intact trace.  Before, every CPU's open run was dropped at any CPU's marker:
    CPU0 busy 218.694 ms of the intact 230.729, and kf_hog's longest run a 9.544 ms one."""
    head, body = _lines(tmp_path)
    intact, _ = _both(_write(tmp_path, "intact.txt", head, body))
    analysis, findings, _path = _cpu1_lost(tmp_path, body, (797.700, 797.725), where, 200, chunk)
    (loss,) = analysis.clock.losses
    hog = next(t for t in analysis.tasks if t.comm == "kf_hog")
    longest = hog.runs.worst
    assert longest is not None and (longest.cpu, f"{longest.start:.6f}") == (0, "797.720130")
    assert round(longest.duration * 1e3, 3) == 12.035 and longest.start < loss.end < longest.start + longest.duration
    whole = {c.cpu: c for c in intact.cpus}
    for c in analysis.cpus:
        figures = (c.busy, c.idle, c.irq_time, c.softirq_time)
        if c.cpu == loss.cpu:
            assert figures != (whole[c.cpu].busy, whole[c.cpu].idle, whole[c.cpu].irq_time, whole[c.cpu].softirq_time)
        else:
            assert figures == (whole[c.cpu].busy, whole[c.cpu].idle, whole[c.cpu].irq_time, whole[c.cpu].softirq_time)
    assert "Long run: kf_hog ran 12.035 ms on CPU0; others waited within their fair share" in [
        f.title for f in findings
    ]


@pytest.mark.parametrize("where", ["start", "end"])
def test_an_rt_hogs_delay_caused_counts_only_the_waits_resolved(tmp_path: Path, where: str) -> None:
    """CPU1's events of 80 ms cut (the span of test_a_wait_across_lost_events_is_unknown_not_measured): tasks woken
    onto CPU1 during the loss are never seen switched in there, so they 'wait' on CPU1 to the trace's end, behind
    kf_rthog's later runs.  The RT hog's delay caused is the waits resolved in the trace (what its victims add up
    to), the rest said as not counted.  Before, with the marker where the loss begins: 'waited 108.154 ms in all
    behind it' (52.399 ms of it never resolved) against the intact trace's 47.523 ms.  Since a waking queues its
    task where its sched_wakeup says, the wakings whose sched_wakeup was lost with CPU1's events queue nothing,
    and a wait that moved to another CPU at a time the trace does not show is charged to no one: 25.230 ms are
    not resolved."""
    head, body = _lines(tmp_path)
    intact, intact_findings = _both(_write(tmp_path, "intact.txt", head, body))
    t0 = _ts(body[0])
    analysis, findings, _path = _cpu1_lost(tmp_path, body, (t0 + 0.08, t0 + 0.16), where, 900, 1 << 12)

    def said(found: list[Finding], of: TraceAnalysis) -> tuple[str, float, Finding]:
        hog = next(f for f in found if f.kind == "sched-rt-hog")
        task = next(t for t in of.tasks if t.comm == "kf_rthog")
        told = sum(v.seconds for v in task.victims) + task.more_victims_seconds
        fact = next(f.value for f in hog.facts if f.name == "delay caused to others")
        return fact, told, hog

    fact, told, _hog = said(intact_findings, intact)
    assert fact == "40.588 ms" == f"{told * 1e3:.3f} ms"  # the intact trace: 47.523 ms with the moved waits
    fact, told, hog = said(findings, analysis)
    task = next(t for t in analysis.tasks if t.comm == "kf_rthog")
    assert fact == f"{told * 1e3:.3f} ms" and f"waited {fact} in all behind it" in hog.summary, hog.summary
    if where == "start":  # the waits of tasks woken onto CPU1 during the loss never end
        assert task.delay_caused - told > 0.01, task.delay_caused
        unresolved = f"{(task.delay_caused - told) * 1e3:.3f} ms"
        assert f"not counted: {unresolved} of waits not resolved in the trace" in hog.summary, hog.summary
        assert "108.154 ms" not in hog.summary and unresolved == "25.230 ms"


@pytest.mark.parametrize("gap", ["lost", "hole"])
def test_a_span_across_lost_events_or_a_hole_is_unknown_not_a_state(
    tmp_path: Path, gap: str, kf: Callable[..., Ran]
) -> None:
    """Review 7 F: a request span of a thread that ran on CPU1 while CPU1's events were lost (or while the whole
    recording had a hole) is 'unknown' for that time, with the loss named: not 'blocked' nor 'preempted' made of the
    absence of events."""
    head, body = _lines(tmp_path)
    t0 = _ts(body[0])
    lo, hi = t0 + 0.08, t0 + 0.16
    cut = [i for i, line in enumerate(body) if _cpu(line) == 1 and lo <= _ts(line) < hi]
    runs = re.findall(r"next_pid=(\d+)", "\n".join(body[i] for i in cut))
    tid = max((int(p) for p in set(runs) if p != "0"), key=runs.count)  # the task that ran most there
    if gap == "lost":
        kept = [line for i, line in enumerate(body) if i not in set(cut)]
        kept.insert(kept.index(body[cut[0] - 1]) + 1, "CPU:1 [LOST 900 EVENTS]")
    else:  # 1.5 s with no event on any CPU from the middle of those 80 ms: the span lies in the hole
        mid = next(i for i in cut if _ts(body[i]) >= lo + 0.04)
        kept = body[:mid] + [_shift(line, 1.5) for line in body[mid:]]
        lo, hi = _ts(body[mid - 1]) + 1e-4, _ts(body[mid - 1]) + 1.0
    path = _write(tmp_path, f"span-{gap}.txt", head, kept)
    start, end = lo + 0.03, lo + 0.05 if gap == "lost" else lo + 0.5
    spans = tmp_path / "spans.csv"
    spans.write_text(f"tid,name,start_ns,end_ns\n{tid},req,{round(start * 1e9)},{round(end * 1e9)}\n")
    out = kf("trace", path, "--spans", spans, "--kernel-clock", "mono", "--slow-ms", "1", "-f", "json")
    assert out.returncode in (0, 1), out.stderr
    (slow,) = json.loads(out.stdout)["spans"]["slow"]
    assert set(slow["totals_ms"]) == {"unknown"}, slow["totals_ms"]
    assert slow["totals_ms"]["unknown"] == pytest.approx((end - start) * 1e3, abs=1e-3)
    said = "CPU1 lost 900 events between line" if gap == "lost" else "(a hole in the recording)"
    assert slow["note"].startswith("unknown: ") and said in slow["note"], slow["note"]


def test_more_losses_than_the_table_lists_are_counted_not_cut_silently(tmp_path: Path, kf: Callable[..., Ran]) -> None:
    """Review ue13 finding 5: a marker every 12 lines, for CPU0 and CPU1 in turn (each CPU reports between its
    own markers: each is a loss of its own).  The table and the JSON listed the first 100 and said nothing of the
    rest; the title says "first 100 of N shown" and the JSON gives the total and that it is cut."""
    head, body = _lines(tmp_path)
    kept: list[str] = []
    for i, line in enumerate(body):
        if i > 20 and i % 12 == 0:
            kept.append(f"CPU:{(i // 12) % 2} [LOST 5 EVENTS]")
        kept.append(line)
    path = _write(tmp_path, "many-losses.txt", head, kept)
    analysis, _findings = _both(path)
    total = len(analysis.clock.losses)
    assert total > 100
    table = kf("trace", path, "--format", "md")
    assert table.returncode in (0, 1), table.stderr
    assert f"Lost events (one row per gap) (first 100 of {total} shown)" in table.stdout
    doc = json.loads(kf("trace", path, "--format", "json").stdout)
    clock = doc["coverage"]["clock"]
    assert (len(clock["losses"]), clock["losses_total"], clock["losses_truncated"]) == (100, total, True)
    assert sum(g.markers for g in analysis.clock.losses) == analysis.coverage.lost_markers  # merged ones counted


def _listed_in_part(kf: Callable[..., Ran], path: Path, key: str) -> list[Finding]:
    """The findings of ``path``, whose ClockCheck ``key`` holds over 100 entries: the JSON lists 100 and says of
    how many."""
    analysis, findings = _both(path)
    total = len(getattr(analysis.clock, key))
    assert total > 100
    clock = json.loads(kf("trace", path, "--format", "json").stdout)["coverage"]["clock"]
    assert (len(clock[key]), clock[f"{key}_total"], clock[f"{key}_truncated"]) == (100, total, True)
    return findings


def test_more_jumps_and_clock_steps_than_the_json_lists_are_counted_not_cut_silently(
    tmp_path: Path, kf: Callable[..., Ran]
) -> None:
    """The JSON's ``jumps`` and ``disputed`` lists held the first 100 and said nothing of the rest (as the losses
    did before 75301adf): each now gives its total and whether it is cut, and a finding that names the first few
    figures it leaves out says how many more there are ("... and N more", not a bare "...")."""
    head, body = _lines(tmp_path)
    block = len(body) // 120  # 119 jumps forward of 6 s (over JUMP_S), every CPU silent across each
    jumped = [_shift(line, 6.0 * (i // block)) for i, line in enumerate(body)]
    findings = _listed_in_part(kf, _write(tmp_path, "many-jumps.txt", head, jumped), "jumps")
    jump = next(f for f in findings if "jumps forward" in f.title)
    dropped = int(re.search(r" (\d+) figures that span a jump are not reported", jump.summary).group(1))  # type: ignore[union-attr]
    assert dropped > 5 and f"... and {dropped - 5} more" in jump.summary
    # A step back on CPU1 every 8 of its events (two of its timestamps swapped): over 100 separate ranges
    cpu1 = [i for i, line in enumerate(body) if "[001]" in line]
    swapped = list(body)
    for k in range(0, len(cpu1) - 1, 8):
        i, j = cpu1[k], cpu1[k + 1]
        swapped[i], swapped[j] = (
            _shift(body[i], _ts(body[j]) - _ts(body[i])),
            _shift(body[j], _ts(body[i]) - _ts(body[j])),
        )
    _listed_in_part(kf, _write(tmp_path, "many-steps.txt", head, swapped), "disputed")
    intact = json.loads(kf("trace", recorded("kf.ftrace.txt", tmp_path), "--format", "json").stdout)
    assert not {"jumps_total", "disputed_total", "losses_total"} & set(intact["coverage"]["clock"])  # unchanged


def test_a_cpu_hogs_waited_in_total_counts_only_the_waits_resolved(tmp_path: Path) -> None:
    """As an RT hog's (6516af35), a CPU hog's "waited X in total" and its fact "delay caused to others" are the
    waits resolved in the trace (what its victims add up to), the rest said as not counted.  CPU1's events of
    50-100 ms cut, the marker where the loss begins: before, "Other tasks on that CPU waited 125.401 ms in total"
    for kf_hog (its victims add up to 23.823 ms, the intact trace's figure: 27.595 ms before the sched_wakeup after a
    sched_waking told where a wakeup queued its task and a wait that moved to another CPU unseen was charged to
    no one), 496.641 ms for qemu-system-x86."""
    head, body = _lines(tmp_path)
    intact, intact_findings = _both(_write(tmp_path, "intact.txt", head, body))
    t0 = _ts(body[0])
    analysis, findings, _path = _cpu1_lost(tmp_path, body, (t0 + 0.05, t0 + 0.10), "start", 900, 1 << 12)

    def said(found: list[Finding], of: TraceAnalysis, comm: str) -> tuple[str, str, Finding]:
        hog = next(f for f in found if f.kind == "sched-cpu-hog" and f" {comm} " in f.title)
        task = next(t for t in of.tasks if t.comm == comm)
        fact = next(f.value for f in hog.facts if f.name == "delay caused to others")
        return fact, f"{task.delay_resolved * 1e3:.3f} ms", hog

    fact, resolved, hog = said(intact_findings, intact, "kf_hog")
    assert fact == resolved == "23.823 ms" and "waited 23.823 ms in total while it ran (not counted: " in hog.summary
    assert "moved to another CPU at a time the trace does not show" in hog.summary  # charged to no one now
    unresolved = 0
    for comm in ("kf_hog", "qemu-system-x86", "python3"):
        fact, resolved, hog = said(findings, analysis, comm)
        task = next(t for t in analysis.tasks if t.comm == comm)
        assert fact == resolved and f"waited {resolved} in total while it ran" in hog.summary, hog.summary
        if task.delay_caused - task.delay_resolved > 0.001:
            unresolved += 1
            rest = f"{(task.delay_caused - task.delay_resolved) * 1e3:.3f} ms"
            assert f"(not counted: {rest} of waits not resolved in the trace" in hog.summary, hog.summary
            assert f"{task.delay_caused * 1e3:.3f} ms" not in hog.summary
    assert unresolved >= 2  # kf_hog (125.401 against 27.595 ms) and qemu-system-x86 (496.641 against 51.944)
    assert all(f.severity < Severity.MEDIUM for f in findings if f.kind == "sched-cpu-hog")  # from harm, unchanged


def test_a_cpu_silenced_by_the_recorder_at_the_end_is_said_so_not_a_buffer_that_filled(
    tmp_path: Path, kf: Callable[..., Ran]
) -> None:
    """ue15 #13: ``perf record -a -e 'sched:*' -- sleep 6`` of a healthy VM ended with CPU0's switch to perf 78 ms
    before CPU1's last event (perf ran there to end the recording and turned the events off), and a wait that
    reached past it made that a low "CPU0 stops reporting before the trace ends ... Its buffer may have filled".
    Here the project's perf recording (CPU0's last event: its switch to perf, line 2407), with a task woken on CPU1
    just after it that runs 30 ms later: the wait is still held back (what ran on CPU0 meanwhile is unseen), and
    the finding says what the silence is, at info, with its baseline."""
    text = recorded("kf.perf-script.txt", tmp_path).read_text().splitlines()
    assert "[000]   823.901784:" in text[2406] and "next_comm=perf next_pid=16820" in text[2406]
    woken = (
        "            mypy 16790 [001]   823.901800:    sched:sched_waking: comm=late pid=777 prio=120 target_cpu=001"
    )
    runs = (
        "            perf 16820 [001]   823.931800:    sched:sched_switch: prev_comm=perf prev_pid=16820 prev_prio=120 "
        "prev_state=S ==> next_comm=late next_pid=777 next_prio=120"
    )
    path = _write(tmp_path, "recorder-end.txt", [], [*text[:2407], woken, *text[2407:], runs])
    analysis, findings = _both(path)
    assert [r.cpu for r in analysis.coverage.stopped] == [0]
    assert [(s.cpu, s.comm, s.pid) for s in analysis.coverage.recorder] == [(0, "perf", 16820)]
    assert "(line 2407, its switch to the recorder perf)" in analysis.coverage.note
    [coverage] = [f for f in findings if f.kind == "trace-coverage"]
    assert coverage.title == "CPU0 stops reporting when the recorder (perf) ends the recording there"
    assert coverage.severity == Severity.INFO and coverage.baseline is not None
    assert "switch to perf (pid 16820), the recording tool itself" in coverage.summary
    assert "buffer that filled or stopped;" in coverage.summary and "Its buffer may have filled" not in coverage.summary
    assert "such figure(s) are not reported: " in coverage.summary
    assert "Wakeup latency: late waited 30.000 ms to run, behind perf" in coverage.summary
    assert not [f for f in findings if f.kind == "sched-wakeup-latency" and "late waited" in f.title]
    assert coverage.evidence[0].locator.start == 2407
    assert_evidence_resolves(findings)
    ran = kf("trace", path, "--fail-on", "low")
    assert "CPU0 stops reporting when the recorder (perf)" in ran.stdout


def test_a_cpu_silent_after_its_stream_file_is_cut_says_the_cut_not_a_full_buffer(tmp_path: Path) -> None:
    """ue23 #7: an LTTng session with channel0_1 cut inside a packet had "could not judge: events after byte 149976 of
    channel0_1" in its examined block, yet its coverage finding guessed "CPU1 ... Its buffer may have filled or
    stopped".  The cut is known (Coverage.cuts, as the pipeline sets it from the reader): it is said instead."""
    from forensics.types.trace import StreamCut

    head, body = _lines(tmp_path)
    t0, t1 = _ts(body[0]), _ts(body[-1])
    kept = [line for line in body if "[000]" not in line or _ts(line) <= (t0 + t1) / 2]
    path = _write(tmp_path, "cpu0-cut.txt", head, kept)
    analysis, _findings = _both(path)
    cut = StreamCut("kernel/channel0_0", 149976, 0)
    analysis = analysis._replace(coverage=analysis.coverage._replace(cuts=(cut,)))
    (stop,) = [f for f in detect(analysis, str(path)) if f.kind == "trace-coverage" and "stop" in f.title]
    assert (
        "CPU0's stream file kernel/channel0_0 ends inside a packet at byte 149976: its events after that were not read"
        in stop.summary
    ), stop.summary
    assert "buffer may have filled" not in stop.summary, stop.summary
    assert stop.next_steps == ("copy the session again whole (a stream file ends inside a packet)",)
    # another CPU's cut says nothing of CPU0's silence: the guess stays
    other = analysis._replace(coverage=analysis.coverage._replace(cuts=(cut._replace(cpu=1),)))
    (stop,) = [f for f in detect(other, str(path)) if f.kind == "trace-coverage" and "stop" in f.title]
    assert "Its buffer may have filled or stopped" in stop.summary, stop.summary
