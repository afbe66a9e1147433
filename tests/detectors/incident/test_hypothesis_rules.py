"""Every rule of the one hypothesis table, on findings built by hand: what it states, how sure, how to confirm."""

from __future__ import annotations

from dataclasses import replace

import pytest

from detectors.incident.deliberate import configured_panic
from detectors.incident.hypotheses import RULES, plain_summary, rank_hypotheses
from forensics.model import (
    Clock,
    Evidence,
    Fact,
    Finding,
    Locator,
    LocatorKind,
    LogCause,
    Severity,
    StatedCause,
    Subject,
    SubjectKind,
    Timestamp,
    finding_id,
)
from forensics.types.dmesg import PRESSURE_FACT

LOG = "kern.log"


def _ev(line: int, text: str, seconds: float | None = None, source: str = LOG) -> Evidence:
    ts = None if seconds is None else Timestamp(seconds, Clock.MONOTONIC)
    return Evidence(source, Locator(LocatorKind.LINE, line), text, timestamp=ts)


def _f(kind: str, title: str, *facts: Fact, severity: Severity = Severity.HIGH, confidence: float = 0.8,
       steps: tuple[str, ...] = ("step one", "step two"), evidence: tuple[Evidence, ...] = ()) -> Finding:  # fmt: skip
    return Finding(finding_id(kind, title), kind, title, severity, confidence, "test", f"summary of {title}",
                   evidence or (_ev(1, title),), steps, facts, "test")  # fmt: skip


CRASH_AT_SITE = _f("crash", "BUG: oops in kf_read", Fact("crash site", "exception frame"),
                   Fact("crashing function", "kf_read"), Fact("module", "kf_buggy"),
                   severity=Severity.CRITICAL, confidence=0.95)  # fmt: skip
CHOSEN_PANIC = _f("crash", "Kernel panic: hung_task", Fact("crash site", "caller of panic()"),
                  Fact("crashing function", "panic"), severity=Severity.CRITICAL, confidence=0.95)  # fmt: skip
OOM = _f("dmesg.oom", "OOM killer invoked", severity=Severity.CRITICAL, confidence=0.9)
SLAB_LEAK = _f("slab-leak", "Slab cache kf_leak_obj leaks 29,790 KB/h",
               Fact("given back", "no: kf_leak_obj never fell between two samples"), confidence=0.9)  # fmt: skip
MEMINFO_LEAK = _f("kernel-memory-leak", "SUnreclaim grows 29,821 KB/h", confidence=0.6, severity=Severity.MEDIUM)

SYSRQ_CRASH = _f("crash", "kernel panic: sysrq triggered crash", Fact("crash site", "caller of panic()"),
                 Fact("crashing function", "sysrq_handle_crash"), Fact("panic message", "sysrq triggered crash"),
                 severity=Severity.CRITICAL, confidence=0.95)  # fmt: skip
PANIC_LINE = "[   97.097476] Kernel panic - not syncing: sysrq triggered crash"
SYSRQ_LOG = _f("dmesg.panic", "kernel panic: sysrq triggered crash", severity=Severity.CRITICAL, confidence=0.9,
               evidence=(_ev(235, PANIC_LINE, 97.097476),))  # fmt: skip

#: (rule, findings, the statement it ranks first, confidence, next command).
CASES = [
    (
        "requested-crash",
        (SYSRQ_CRASH,),
        "the crash was deliberate: requested with sysrq (echo c > /proc/sysrq-trigger, Alt+SysRq+C, or a watchdog "
        "writing to it), by a kdump test, an operator, or a watchdog or monitoring agent that judged the machine stuck",
        0.95,
        "crash> log  # who requested it: the kernel log up to the crash (in the dump); on the crashed machine, "
        "journalctl -b -1 -n 200 and grep -rl sysrq-trigger /etc /usr/lib/systemd /usr/local "
        "(scripts and units that write it)",
    ),
    (
        "stated",
        (
            replace(
                _f("bug-condition", "BUG_ON held", confidence=0.95),
                stated=StatedCause("buf->refcount = 0 at kf_put", "grep -n refcount kf.c"),
            ),
        ),
        "buf->refcount = 0 at kf_put",
        0.95,
        "grep -n refcount kf.c",
    ),
    (
        "null-field",
        (
            _f(
                "null-field",
                "NULL pointer: dev->sensor was NULL",
                Fact("next command", "grep -n sensor x.c"),
                confidence=0.9,
            ),
        ),
        "NULL pointer: dev->sensor was NULL: a missing NULL check or an object used before it is set up",
        0.9,
        "grep -n sensor x.c",
    ),
    ("crash-site", (CRASH_AT_SITE,), "a bug in kf_read (module kf_buggy)", 0.76, "step one"),
    (
        "module",
        (_f("module", "out-of-tree/unsigned module kf_buggy (O) is in the crashing stack", confidence=0.9),),
        "a bug in an out-of-tree module: out-of-tree/unsigned module kf_buggy (O) is in the crashing stack",
        0.6,
        "step one",
    ),
    (
        "lock-owner",
        (
            _f(
                "hung-task",
                "task kf_waiter (pid 43) waits on kf_lock",
                Fact("lock owner", "kf_holder (pid 42)"),
                steps=("crash> bt 43", "crash> bt 42"),
                confidence=0.9,
            ),
        ),
        "kf_holder (pid 42) holds the lock and never releases it: task kf_waiter (pid 43) waits on kf_lock",
        0.9,
        "crash> bt 42",
    ),
    (
        "leak",
        (SLAB_LEAK, OOM),
        "memory leak: Slab cache kf_leak_obj leaks 29,790 KB/h, which exhausted memory and led to the OOM killer",
        0.99,
        "step one",
    ),
    ("leak", (MEMINFO_LEAK,), "memory leak: SUnreclaim grows 29,821 KB/h", 0.6, "step one"),
    (
        "outsized-slab",
        (_f("outsized-slab", "slab cache kf_leak_obj is outsized", confidence=0.55),),
        "memory leak: slab cache kf_leak_obj is outsized",
        0.44,
        "step one",
    ),
    (
        "workload-oom",
        (OOM,),
        "memory exhaustion by a user-space workload (no kernel leak was measured)",
        0.5,
        "kforensic slab-watch --hours 24",
    ),
    (
        "starvation",
        (_f("sched-rt-hog", "kf_spinner (pid 42) ran 9 s on CPU1 at prio 0", confidence=0.9),),
        "CPU starvation: kf_spinner (pid 42) ran 9 s on CPU1 at prio 0",
        0.81,
        "step one",
    ),
    (
        "log-cause",
        (
            replace(
                _f(
                    "dmesg.kasan",
                    "KASAN: slab-use-after-free Read in kf_read",
                    evidence=(_ev(1, "BUG: KASAN: slab-use-after-free in kf_read+0x1/0x2"),),
                ),
                log_cause=LogCause(
                    "use_after_free",
                    "use-after-free: kf_read uses a kf_obj object after it was freed",
                    0.9,
                    "look at the freed-by stack",
                ),
            ),
        ),
        "use-after-free: kf_read uses a kf_obj object after it was freed",
        0.9,
        "look at the freed-by stack",
    ),
    (
        "log-bug",
        (_f("dmesg.warning", "WARNING in kf_stop", Fact("guilty frame", "kf_stop"), confidence=0.9),),
        "a kernel bug reported as WARNING in kf_stop (guilty frame kf_stop)",
        0.63,
        "step one",
    ),
]


@pytest.mark.parametrize(
    ("title", "setting"),
    [
        ("kernel panic: Out of memory: system-wide panic_on_oom is enabled", "vm.panic_on_oom"),
        ("kernel panic: Out of memory: compulsory panic_on_oom is enabled", "vm.panic_on_oom"),
        ("kernel panic: panic_on_warn set", "kernel.panic_on_warn"),
        ("kernel panic: hung_task: blocked tasks", "kernel.hung_task_panic"),
        ("kernel panic: softlockup: hung tasks", "kernel.softlockup_panic"),
        ("kernel panic: Hard LOCKUP", "kernel.hardlockup_panic"),
        ("kernel panic: RCU Stall", "kernel.panic_on_rcu_stall"),
    ],
)
def test_a_panic_a_setting_asked_for_is_no_kernel_bug(title: str, setting: str) -> None:
    panic = _f("dmesg.panic", title, severity=Severity.CRITICAL, confidence=0.9)
    assert configured_panic(panic) == setting
    assert dict(RULES)["log-bug"]((panic,)) == []
    # any other panic is still one: nothing but the log tells what made it
    other = _f("dmesg.panic", "kernel panic: Attempted to kill init!", severity=Severity.CRITICAL, confidence=0.9)
    assert configured_panic(other) is None
    assert [h.statement for h in dict(RULES)["log-bug"]((other,))] == [
        "a kernel bug reported as kernel panic: Attempted to kill init!"
    ]


def test_a_crash_forced_with_sysrq_below_medium_is_said_as_such() -> None:
    low = replace(SYSRQ_CRASH, severity=Severity.LOW)
    assert plain_summary((low,), "web1") == (
        "The Linux kernel on web1 was crashed on request with sysrq (kernel panic: sysrq triggered crash): a kdump "
        "test, an operator, a watchdog or a write to /proc/sysrq-trigger by mistake. No problem at medium severity or "
        "above was found."
    )


def test_every_rule_has_a_case() -> None:
    assert {name for name, *_ in CASES} == {name for name, _rule in RULES}


@pytest.mark.parametrize(("rule", "findings", "statement", "confidence", "command"), CASES,
                         ids=[f"{c[0]}-{i}" for i, c in enumerate(CASES)])  # fmt: skip
def test_rule(rule: str, findings: tuple[Finding, ...], statement: str, confidence: float, command: str) -> None:
    fn = dict(RULES)[rule]
    assert statement in [h.statement for h in fn(findings)]
    top = rank_hypotheses(findings)[0]
    assert (top.rank, top.statement, top.confidence, top.next_command) == (1, statement, confidence, command)
    assert top.supporting  # each cites the evidence or the summary it stands on
    # and names the findings it rests on (typed ids, not text to match): each one of the input
    assert top.finding_ids and set(top.finding_ids) <= {f.id for f in findings}


def test_meminfo_leaks_are_hypotheses_and_grow_into_the_oom() -> None:
    ranked = rank_hypotheses((MEMINFO_LEAK, OOM))
    assert ranked[0].finding_ids == (MEMINFO_LEAK.id, OOM.id)  # the leak, then the OOM it led to
    assert ranked[0].statement == (
        "memory leak: SUnreclaim grows 29,821 KB/h, which exhausted memory and led to the OOM killer"
    )
    assert ranked[0].against == ("the growth may be a workload that keeps legitimate objects",)
    assert not any("user-space workload" in h.statement for h in ranked)  # a leak was measured


def test_a_panic_the_kernel_chose_is_not_a_bug_site() -> None:
    assert not any("panic" in h.statement for h in rank_hypotheses((CHOSEN_PANIC,)))


def test_a_log_report_is_left_to_the_dump_when_there_is_one() -> None:
    warning = _f("dmesg.warning", "WARNING in kf_stop", confidence=0.9)
    assert [h.statement for h in rank_hypotheses((CRASH_AT_SITE, warning))] == ["a bug in kf_read (module kf_buggy)"]


def test_a_disagreeing_log_weakens_the_crash_site() -> None:
    contradiction = _f("contradiction", "the dump and the log disagree", severity=Severity.MEDIUM)
    top = rank_hypotheses((CRASH_AT_SITE, contradiction))[0]
    assert "the log and the dump disagree on the crash" in top.against


def test_order_breaks_ties_and_a_statement_is_kept_once() -> None:
    a = _f("sched-cpu-hog", "hog A", confidence=0.5)
    b = _f("sched-cpu-hog", "hog B", confidence=0.5)
    ranked = rank_hypotheses((a, b, a))
    assert [h.statement for h in ranked] == ["CPU starvation: hog A", "CPU starvation: hog B"]


def test_findings_of_another_boot_are_not_causes() -> None:
    crash = _f("crash", "Kernel panic - not syncing: hung_task", Fact("crash site", "caller of panic()"),
               severity=Severity.CRITICAL, evidence=(_ev(3, "Kernel panic", 100.0, "dump.log"),))  # fmt: skip
    hog = _f("sched-cpu-hog", "kf_spinner ran 9 s", evidence=(_ev(1, "kf_spinner", 797.7, "trace.txt"),))
    assert rank_hypotheses((hog,))[0].statement == "CPU starvation: kf_spinner ran 9 s"
    assert rank_hypotheses((crash, hog)) == ()


def test_findings_of_another_host_are_not_causes() -> None:
    hog = _f("sched-cpu-hog", "kf_spinner ran 9 s", evidence=(_ev(1, "kf_spinner", source="trace.txt"),))
    other = _f("contradiction", "trace.txt comes from host b, not a", Fact("other host", "trace.txt"),
               severity=Severity.MEDIUM)  # fmt: skip
    assert rank_hypotheses((hog, other)) == ()


def test_an_input_of_another_host_is_a_contradiction_and_not_a_cause() -> None:
    from detectors.incident.correlate import other_hosts
    from forensics.model import Incident, NotAvailable

    hog = _f("sched-cpu-hog", "kf_spinner ran 9 s", evidence=(_ev(1, "kf_spinner", source="trace.txt"),))
    dump = Incident("web-17", "6.1", NotAvailable("x"), (), (CRASH_AT_SITE,))
    trace = Incident("db-3", NotAvailable("x"), NotAvailable("x"), (), (hog,))
    unnamed = Incident("(none)", NotAvailable("x"), NotAvailable("x"), (), (hog,))
    assert other_hosts((dump, unnamed)) == []
    (found,) = other_hosts((dump, trace))
    assert found.kind == "contradiction" and found.fact("other host") == "trace.txt"
    assert found.title == "trace.txt comes from host db-3, not web-17: its findings are not this incident's causes"
    ranked = rank_hypotheses((CRASH_AT_SITE, hog, found))
    assert [h.statement for h in ranked] == ["a bug in kf_read (module kf_buggy)"]


def test_a_sysrq_crash_is_deliberate_in_the_log_alone_and_after_correlation() -> None:
    from detectors.incident.correlate import correlate

    # The log alone: no "kernel bug reported as ..." and no mailing-list search.
    ranked = rank_hypotheses((SYSRQ_LOG,))
    assert [h.statement.split(":")[0] for h in ranked] == ["the crash was deliberate"]
    merged, _ = correlate((SYSRQ_CRASH, SYSRQ_LOG))
    for f in merged:
        assert (f.fact("requested") or "").startswith("requested with sysrq"), f.title
        assert not any("mailing lists" in s for s in f.next_steps)
        assert "not a kernel bug" in f.summary
    plain = plain_summary(merged, "db7")
    assert plain.startswith(
        "The Linux kernel on db7 was crashed on request with sysrq (kernel panic: sysrq triggered crash)"
    )
    assert "No other problem at medium or above" in plain


def test_leaking_or_exhausted_is_decided_from_the_evidence() -> None:
    never = Fact("given back", "no: kf_leak_obj never fell between two samples")
    healthy = _f("slab-leak", "Slab cache kf_leak_obj leaks 29,729 KB/h", never,
                 Fact("memory exhausted", "no: MemAvailable 122 MiB of 143 MiB (85%) at the last sample"))  # fmt: skip
    said = plain_summary((SYSRQ_CRASH, healthy), "vm")
    assert "kernel memory was leaking (growing and never given back), but memory was not used up" in said
    assert "MemAvailable 122 MiB of 143 MiB (85%)" in said and "used up and never" not in said
    full = _f("slab-leak", "Slab cache x leaks", Fact("memory exhausted", "yes: MemAvailable 3 MiB of 143 MiB (2%)"))
    assert "kernel memory leaked until memory ran out (MemAvailable 3 MiB" in plain_summary((full,), "vm")
    assert "leaked until memory ran out (OOM killer invoked)" in plain_summary((SLAB_LEAK, OOM), "vm")
    assert "whether memory ran out is unknown" in plain_summary((SLAB_LEAK,), "vm")


def test_a_suspicion_stays_one_and_memory_given_back_is_named() -> None:
    # The reviewer's healthy VM (2026-12-06): UDP went 85 -> 5,196 sockets (sample 42) and fell to 168 (sample 43),
    # a suspicion (medium, 0.47): the verdict said "leaking (growing and never given back)".
    fell = Fact("given back", "yes: UDP fell from 6,820 KB (sample 42, 2026-12-06T18:20:09+00:00) to 221 KB "
                "(sample 43, 2026-12-06T18:20:14+00:00), 97% of its rise before it")  # fmt: skip
    unused = Fact("memory exhausted", "no: MemAvailable 20,929 MiB of 24,105 MiB (87%) at the last sample")
    suspect = _f("slab-leak-group", "UDP sockets suspected leak: UDP, sock_inode_cache grow together", fell, unused,
                 severity=Severity.MEDIUM, confidence=0.47)  # fmt: skip
    said = plain_summary((suspect,), "vm")
    assert "a kernel memory leak was suspected (growing, though it gave memory back: UDP fell from 6,820 KB" in said
    assert "97% of its rise before it), but memory was not used up" in said
    assert "was leaking" not in said and "never given back" not in said
    # Called (high) and given back: leaking, the fall named; a suspicion that never fell back: suspected, never.
    called = replace(suspect, severity=Severity.HIGH)
    assert "kernel memory was leaking (growing, though it gave memory back: UDP fell" in plain_summary((called,), "vm")
    steady = replace(suspect, facts=(Fact("given back", "no: UDP never fell between two samples"), unused))
    assert "a kernel memory leak was suspected (growing and never given back)" in plain_summary((steady,), "vm")
    # Without the fact (a finding of another version), nothing is claimed about giving back.
    bare = replace(suspect, facts=(unused,))
    assert "whether it was given back was not measured" in plain_summary((bare,), "vm")
    # A suspicion beside an OOM does not become "leaked until memory ran out".
    assert "memory ran out, with a kernel memory leak suspected (OOM killer" in plain_summary((suspect, OOM), "vm")


def test_kernel_objects_a_process_holds_are_the_processs_in_every_wording() -> None:
    """A suspicion, memory run out and a crash beside it: a leak the finding attributes to objects a process holds
    (its typed HELD_BY_PROCESS subject) is never told as the kernel's leak; one without it still is."""
    held = (Subject(SubjectKind.HELD_BY_PROCESS, "UDP sockets"),)
    unused = Fact("memory exhausted", "no: MemAvailable 20,929 MiB of 24,105 MiB (87%) at the last sample")
    group = replace(_f("slab-leak-group", "UDP sockets leak: UDP, sock_inode_cache grow together", unused,
                       Fact("given back", "no: UDP never fell between two samples")), subjects=held)  # fmt: skip
    assert plain_summary((group,), "vm") == (
        "On vm, a process is holding kernel memory (suspected: UDP sockets; growing, none of it given back while "
        "sampled), but memory was not used up: MemAvailable 20,929 MiB of 24,105 MiB (87%) at the last sample. The "
        "finding: UDP sockets leak: UDP, sock_inode_cache grow together (high). Hypothesis 1 of the ranking "
        "(confidence 0.80) names it."
    )
    suspect = replace(group, severity=Severity.MEDIUM)
    assert plain_summary((suspect,), "vm").startswith("On vm, a process may be holding kernel memory (suspected: UDP")
    assert "a process held kernel memory until memory ran out (suspected: UDP sockets) (OOM killer invoked)" in (
        plain_summary((group, OOM), "vm")
    )
    assert "memory ran out, with a process suspected of holding kernel memory (UDP sockets) (OOM" in plain_summary(
        (suspect, OOM), "vm"
    )
    beside = plain_summary((SYSRQ_CRASH, group), "vm")
    assert "The main problem found: a process is holding kernel memory (suspected: UDP sockets;" in beside, beside
    for said in (plain_summary(x, "vm") for x in ((group,), (suspect,), (group, OOM), (SYSRQ_CRASH, group))):
        assert "kernel memory was leaking" not in said and "kernel memory leak" not in said, said
    assert plain_summary((SLAB_LEAK,), "vm").startswith("The Linux kernel on vm had a problem: kernel memory was")


def test_the_dumps_free_pages_can_say_not_used_up_never_exhausted() -> None:
    from detectors.incident.correlate import correlate
    from detectors.incident.hypotheses import FREE_AT_CRASH

    cache = (Subject(SubjectKind.SLAB_CACHE, "kf_leak_obj"),)
    leak = replace(SLAB_LEAK, subjects=cache)

    def dump(free: str) -> Finding:
        fact = Fact(FREE_AT_CRASH, f"{free} free (nr_free_pages; reclaimable page cache not counted)")
        return replace(_f("outsized-slab", "slab cache kf_leak_obj is outsized", Fact("cache", "kf_leak_obj"), fact,
                          severity=Severity.MEDIUM), subjects=cache)  # fmt: skip

    # Merged into the leak (leak-outsized), the dump's figure stays with the finding that is kept.
    merged, _ = correlate((leak, dump("124 MiB of 143 MiB (86%)")))
    said = plain_summary(merged, "vm")
    assert "leaking (growing and never given back), but memory was not used up: the dump shows 124 MiB" in said
    # Few free pages in a dump do not prove exhaustion (page cache is reclaimable): unknown, with the figure.
    merged, _ = correlate((leak, dump("3 MiB of 143 MiB (2%)")))
    said = plain_summary(merged, "vm")
    assert "the dump shows 3 MiB of 143 MiB (2%) free at the crash (page cache not counted" in said
    assert "leaked until memory ran out" not in said and "not used up" not in said


def test_two_views_of_one_moment_are_an_instant_and_coverage_is_no_event() -> None:
    from detectors.incident.timeline import build_timeline, narrative
    from forensics.model import FindingKind, NotAvailable

    dump_ev = _ev(246, "Kernel panic - not syncing: sysrq triggered crash", 97.097477, "vmcore#log")
    log_ev = _ev(235, "Kernel panic - not syncing: sysrq triggered crash", 97.097476)
    crash = _f("crash", "kernel panic: sysrq triggered crash", evidence=(log_ev, dump_ev))
    coverage = _f(FindingKind.LEAK_COVERAGE, "Leak analysis examined 90 samples over 93 s", severity=Severity.INFO,
                  evidence=(_ev(1, "MemTotal: 146844 kB", 90.0),))  # fmt: skip
    [event] = build_timeline((crash, coverage), NotAvailable("no boot time"))
    assert event.end is None and event.duration_text() == "instant"
    assert "for 0.001 ms" not in narrative((event,)) and "Leak analysis" not in narrative((event,))


def test_cpu_starvation_is_hypothesised_only_from_problems() -> None:
    info = _f(
        "sched-cpu-hog", "Long run: crash ran 895 ms on CPU1; no other task needed the CPU", severity=Severity.INFO
    )
    low = _f("sched-cpu-hog", "CPU hog: gzip ran 16 ms", severity=Severity.LOW)
    medium = _f("sched-rt-hog", "RT hog: spin ran 90 ms, starving other tasks", severity=Severity.MEDIUM)
    statements = [h.statement for h in rank_hypotheses((info, low, medium))]
    assert [s for s in statements if s.startswith("CPU starvation")] == [f"CPU starvation: {medium.title}"]


@pytest.mark.parametrize(
    ("line", "deliberate"),
    [
        ("[   12.000001] SysRq : Trigger a crash", True),  # older kernels' case
        ("[   12.000001] SYSRQ: TRIGGER A CRASH", True),
        ("[   12.000001] \u017fysrq: trigger a crash", True),  # a long s, which the pattern's case takes for an s
        ("[   12.000001] sysrq: Show Blocked State", False),
        ("[   12.000001] BUG: kernel NULL pointer dereference, address: 0000000000000008", False),
    ],
)
def test_the_sysrq_mark_is_found_in_any_case(line: str, deliberate: bool) -> None:
    from detectors.incident.deliberate import is_deliberate

    crash = _f("dmesg.panic", "Kernel panic - not syncing: Fatal exception", evidence=(_ev(7, line, 12.000001),))
    assert is_deliberate(crash) is deliberate


@pytest.mark.parametrize(
    ("steps", "first"),
    [
        (("crash> bt 1",), "crash> log  # who requested it"),
        # a dump the crash the steps are checked with does not open (6.12): its steps are drgn's, and "crash> log"
        # was printed by `report` for it all the same (review 10, 8 left it)
        ((">>> %crash bt 1", "grep -n x y.c"), ">>> %crash log  # who requested it"),
    ],
)
def test_a_deliberate_dump_crash_is_followed_up_in_the_tool_its_steps_are_for(
    steps: tuple[str, ...], first: str
) -> None:
    from detectors.incident.deliberate import mark

    crash = _f("crash", "Kernel panic - not syncing: sysrq triggered crash", steps=steps,
               evidence=(_ev(7, "[   12.000001] sysrq: Trigger a crash", 12.000001),))  # fmt: skip
    marked = mark(crash)
    assert marked.next_steps[0].startswith(first)
    assert marked.next_steps[1:] == mark(_f("crash", crash.title, evidence=crash.evidence)).next_steps[1:]


@pytest.mark.parametrize(
    ("pressure", "ran_out"),
    [
        ("yes: every zone at or below its low watermark (DMA32 free 30100 kB, low watermark 37892 kB)", True),
        ("no: free pages above the low watermark (DMA32 free 2939248 kB, low watermark 37892 kB)", False),
        ("unknown (no Mem-Info in the log)", False),
        (None, False),
    ],
)
def test_an_allocation_failure_is_memory_that_ran_out_only_where_its_dump_shows_it(
    pressure: str | None, ran_out: bool
) -> None:
    # An 8 GiB vmalloc on a 6.2 GiB machine (zones far above their watermarks) was "memory exhaustion by a user-space
    # workload" (0.50), and a leak beside it "exhausted memory and led to the OOM killer".
    facts = (Fact(PRESSURE_FACT, pressure),) if pressure else ()
    failure = _f("dmesg.alloc-failure", "vmalloc: allocation failure in kf_table_alloc", *facts,
                 severity=Severity.MEDIUM, confidence=0.9)  # fmt: skip
    alone = [h.statement for h in rank_hypotheses((failure,))]
    assert ("memory exhaustion by a user-space workload (no kernel leak was measured)" in alone) is ran_out, alone
    leak = [h.statement for h in rank_hypotheses((failure, SLAB_LEAK)) if h.statement.startswith("memory leak")]
    assert ("which exhausted memory" in leak[0]) is ran_out, leak
