"""Golden tests of the report reading (detectors/dmesg/why.py) on real reports, one or more per class.

Two sets of real logs:

- the shared evaluation corpus (``../shared/corpus/syzkaller-linux-dev``: syzkaller's console logs), READ at
  run time and skipped when it is absent; nothing of its text is in the project: ``why/shared_corpus.json``
  holds only the values expected from each file, keyed by the corpus file name;
- the fixture kernel's own console logs (``vmcore_fixtures/cases/*/console.log``), keyed by case name;
- held out from both: the real syzbot and distribution reports of ``corpora/`` (the project's own test data,
  copied there for the titles' tests, see each SOURCE.md), every report of each log, keyed by
  ``corpus/file``: ``why/held_out_corpora.json``.  Their values were checked against the report text by hand
  when first written, the KASAN offset from "located N bytes inside of" (or the object's address), the
  faulting instruction against the Code: bytes' marked word.

For each report the expected values are those the class is read for (KASAN: access, size, cache, offset and
the first foreign frame of each stack; lockdep: every lock of the chain with where it was taken, the lock
being taken and the one held; RCU stalls: the stalled CPUs and tasks; hung tasks: the task, what it waits
for and where; ...), and the cause's class and statement.  Regenerate after a deliberate change with
    .venv/bin/python -m tests.detectors.dmesg.test_why_golden --update
and review the diff (every value was checked against its log by hand when it was first written).
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from typing import Any

import pytest

from detectors.dmesg.findings import explain_reports, explained_finding, group_reports
from detectors.dmesg.scanner import scan_chunks
from forensics.model import NotAvailable
from forensics.pipelines.dmesg import triage_file
from forensics.report.dmesg import why_text
from forensics.types.dmesg import ReportWhy
from tests.helpers import assert_evidence_resolves

HERE = Path(__file__).parent / "why"
SHARED = Path(__file__).resolve().parents[4] / "shared" / "corpus" / "syzkaller-linux-dev"
if not SHARED.is_dir():
    SHARED = Path("/work/shared/corpus/syzkaller-linux-dev")
FIXTURES = Path(__file__).resolve().parents[3] / "vmcore_fixtures" / "cases"

#: The corpus files read, by class (the first report of each; chosen to cover every reader and its formats).
SHARED_CASES = {
    "kasan": ("8", "106", "110", "130", "216", "226", "306", "338", "376", "410", "424", "568", "650", "658", "704",
              "740"),
    "kfence": ("590", "592", "594", "596", "598"),
    "kmsan": ("626", "632", "634"),
    "data-race": ("428", "750"),
    "memory-leak": ("310", "312", "52", "54", "752"),
    "lockdep": ("26", "30", "116", "186", "188", "190", "234", "250", "466", "558", "666"),
    "rcu-stall": ("58", "268", "270", "276", "298", "612", "720", "1002"),
    "hung-task": ("70", "72", "176", "386", "432", "526", "692"),
    "lockup": ("264", "266", "288", "296", "350", "504"),
    "list-corruption": ("184",),
    "refcount": ("158", "406"),
    "bad-page": ("726",),
    "fault": ("112", "174", "260", "308", "510", "600", "738", "10", "564"),
    "atomic-context": ("366", "642", "644", "608", "628", "496"),
    "rcu-usage": ("166", "170", "202", "206", "244", "248"),
    "wait-context": ("528", "546"),
    "spinlock": ("64", "68", "78"),
    "ubsan": ("40", "42", "454", "456", "520"),
}  # fmt: skip

#: Facts compared per class (the acceptance values); a class not listed compares every fact it has.
_FACTS = {
    "kasan": ("tool", "bug", "access", "size", "address", "cache", "object size", "offset", "object state"),
    "kfence": ("bug", "access", "address", "cache", "object size", "offset"),
    "kmsan": ("bug", "uninitialized bytes", "local variable", "uninit created by", "uninit stored by"),
    "lockdep": ("lockdep", "task", "acquiring lock", "acquiring at", "holding lock", "holding at", "chain",
                "releasing lock", "releasing at", "usage", "changed lock", "changed at", "other lock", "warning at"),
    "rcu-stall": ("flavour", "stall", "stalled CPUs", "stalled tasks", "stalled jiffies", "running",
                  "all quiescent states seen", "running task", "running pid"),
    "hung-task": ("task", "pid", "blocked seconds", "state", "waits for", "waits for lock", "wait primitive",
                  "waits in", "blocked on", "lock owner", "lock holder", "lock holder pid", "lock held since"),
    "list-corruption": ("operation", "pointer", "expected", "found", "found is", "entry"),
    "refcount": ("refcount event", "consequence", "warning at"),
    "bad-page": ("bad page", "process", "pfn", "refcount", "mapcount", "flags", "reason", "page allocated by"),
    "fault": ("fault", "address", "address is", "access", "faulting function", "faulting instruction",
              "memory operand", "base register", "KASAN checks", "KASAN range", "loaded from", "object pointer",
              "warning at", "condition"),
    "lockup": ("lockup", "CPU", "stuck seconds", "task", "pid", "spins in"),
    "oom": ("invoker", "gfp_mask", "order", "constraint", "killed", "killed pid", "RAM bytes"),
    "alloc-failure": ("task", "order", "mode", "caller"),
    "rcu-usage": ("RCU check", "RCU check at", "rcu_scheduler_active", "debug_locks", "RCU not watching", "locks held",
                  "RCU reader held"),
}  # fmt: skip


def expected_values(why: ReportWhy, first: int) -> dict[str, Any]:
    """The values a golden file keeps for one report (lines as absolute numbers where a value has one)."""
    names = _FACTS.get(why.cls or "", ())
    # A value not read is kept as the JSON says it ({"not_available": why}).
    facts = {f.name: {"not_available": f.value.reason} if isinstance(f.value, NotAvailable) else f.value
             for f in reversed(why.facts) if not names or f.name in names}  # fmt: skip
    out: dict[str, Any] = {"class": why.cls, "facts": dict(sorted(facts.items()))}
    out["stacks"] = [
        [s.kind, s.first_foreign.function if s.first_foreign else None, s.task, *([s.cpu] if s.cpu is not None else [])]
        for s in why.stacks
    ]
    if why.locks:
        out["locks"] = [[k.role, k.number, k.name, k.site] for k in why.locks]
    if why.cpus:
        out["cpus"] = [c.cpu for c in why.cpus]
    if why.tasks:
        out["tasks"] = [[t.comm, t.pid] for t in why.tasks]
    if why.consumers:
        out["memory users"] = [[c.kind, c.name, c.pid, c.bytes] for c in why.consumers[:3]]
    if why.zones:
        out["zones"] = [[z.zone, z.free_kb, z.min_kb] for z in why.zones]
    if why.code is not None:
        out["code"] = [why.code.faulting, first + why.code.at]
    out["cause"] = [why.cause.cls, why.cause.statement] if why.cause else None
    return out


def corpus_log(name: str) -> bytes:
    """A corpus file's log: the text after its ``KEY: value`` header, before an optional ``REPORT:`` section."""
    data = (SHARED / name).read_bytes()
    return data.partition(b"\n\n")[2].split(b"\nREPORT:\n")[0]


def shared_values() -> dict[str, Any]:
    out = {}
    for cls, names in SHARED_CASES.items():
        for name in names:
            report = next(iter(scan_chunks([corpus_log(name)])))
            why = explain_reports([report])[report.start_line]
            assert why.cls == cls, f"{name}: read as {why.cls}, listed as {cls}"
            out[name] = expected_values(why, report.start_line)
    return out


def fixture_values() -> dict[str, Any]:
    out: dict[str, Any] = {}
    for case in sorted(p.parent.name for p in FIXTURES.glob("*/console.log")):
        reports = list(scan_chunks([(FIXTURES / case / "console.log").read_bytes()]))
        whys = explain_reports(reports)
        out[case] = [{"line": r.start_line, "title": r.title, **expected_values(whys[r.start_line], r.start_line)}
                     for r in reports]  # fmt: skip
    return out


CORPORA = Path(__file__).parent / "corpora"


def held_out_values() -> dict[str, Any]:
    """Every report of every log of ``corpora/`` read to its values, keyed by ``corpus/file``."""
    out: dict[str, Any] = {}
    for log in sorted(CORPORA.glob("*/*.log")):
        reports = list(scan_chunks([log.read_bytes()]))
        whys = explain_reports(reports)
        out[f"{log.parent.name}/{log.name}"] = [
            {"line": r.start_line, "title": r.title, **expected_values(whys[r.start_line], r.start_line)}
            for r in reports
        ]
    return out


needs_shared = pytest.mark.skipif(not SHARED.is_dir(), reason="needs ../shared/corpus/syzkaller-linux-dev")
needs_fixtures = pytest.mark.skipif(not any(FIXTURES.glob("*/console.log")), reason="no vmcore_fixtures consoles")


@needs_shared
@pytest.mark.parametrize("name", [n for names in SHARED_CASES.values() for n in names])
def test_shared_corpus_report_read_to_its_values(name: str) -> None:
    expected = json.loads((HERE / "shared_corpus.json").read_text())
    report = next(iter(scan_chunks([corpus_log(name)])))
    why = explain_reports([report])[report.start_line]
    assert expected_values(why, report.start_line) == expected[name]


@needs_shared
def test_every_class_has_shared_cases() -> None:
    expected = json.loads((HERE / "shared_corpus.json").read_text())
    assert set(expected) == {n for names in SHARED_CASES.values() for n in names}
    for cls, names in SHARED_CASES.items():
        assert names and all(expected[n]["class"] == cls for n in names)
    # The acceptance values are there: KASAN's access, size, cache, offset and first foreign frames.
    kasan = expected["740"]
    wanted = {"access": "Read", "size": 8, "cache": "ntfs_inode_cache", "offset": 1696}
    assert kasan["facts"].items() >= wanted.items()
    assert {k: f for k, f, _ in kasan["stacks"]} == {
        "call-trace": "chrdev_open", "allocated": "ntfs_alloc_inode", "freed": "i_callback",
        "aux-work": "destroy_inode", "page-alloc": "ntfs_alloc_inode", "page-free": "tomoyo_realpath_from_path",
    }  # fmt: skip
    chain = [[n, name, site] for role, n, name, site in expected["186"]["locks"] if role == "chain"]
    assert chain == [[2, "rtnl_mutex", "clusterip_tg_destroy"], [1, "&xt[i].mutex", "xt_find_table_lock"],
                     [0, "sk_lock-AF_INET6", "do_ipv6_setsockopt"]]  # fmt: skip
    assert expected["268"]["cpus"] == [1]


@needs_shared
@pytest.mark.parametrize("name", [n for names in SHARED_CASES.values() for n in names])
def test_shared_corpus_why_evidence_resolves(name: str, tmp_path: Path) -> None:
    log = tmp_path / name
    log.write_bytes(corpus_log(name))  # the test's own copy, deleted with tmp_path
    reports = list(scan_chunks([log.read_bytes()]))
    whys = explain_reports(reports)
    findings = [explained_finding(str(log), g, whys.get(g.first.start_line)) for g in group_reports(reports)]
    assert_evidence_resolves(findings)


#: The corpus's soft lockups whose report holds another CPU's NMI backtrace (264: the stuck CPU's loop frame is only
#: on its RIP line, its call trace does not repeat it, CPU 0's backtrace does), and lockdep's irq-state lines naming
#: the same function above the RIP (264, 266).
_LOCKUPS_WITH_OTHER_CPUS = ("264", "266", "288", "350", "504", "506", "538")


def _cpu_of_lines(text: str, stuck: int) -> dict[int, int]:
    """Each line's CPU as a reader marks it by hand: the watchdog's CPU until a "NMI backtrace for cpu N" or
    "CPU: N PID:" line, that CPU's up to the next such line."""
    out, cpu = {}, stuck
    for number, line in enumerate(text.splitlines(), 1):
        if (m := re.search(r"NMI backtrace for cpu (\d+)|\] CPU: (\d+) (?:UID: \d+ )?PID: ", line)) is not None:
            cpu = int(m.group(1) or m.group(2))
        out[number] = cpu
    return out


@needs_shared
@pytest.mark.parametrize("name", _LOCKUPS_WITH_OTHER_CPUS)
def test_lockup_frames_cited_from_the_stuck_cpus_own_lines(name: str, tmp_path: Path) -> None:
    log = tmp_path / name
    log.write_bytes(corpus_log(name))  # the test's own copy, deleted with tmp_path
    reports = list(scan_chunks([log.read_bytes()]))
    whys = explain_reports(reports)
    report = reports[0]
    assert isinstance(report.cpu, int)
    cpu_of = _cpu_of_lines(log.read_text(), report.cpu)
    finding = explained_finding(str(log), group_reports(reports)[0], whys.get(report.start_line))
    cited = [e for e in finding.evidence if e.locator.name in ("guilty frame", "spins in")]
    assert cited, "no frame cited"
    for e in cited:
        assert cpu_of[e.locator.start] == report.cpu, f"{e.locator.name} cites CPU {cpu_of[e.locator.start]}'s line"
        assert "irqs last" not in e.excerpt, f"{e.locator.name} cites lockdep's irq-state line"
    # Each call trace is labelled with the CPU whose dump holds it, as the reader marks its lines, in the Why's
    # list too: CPU 0's NMI backtrace is not the stuck CPU's stack.
    traces = [s for s in whys[report.start_line].stacks if s.kind == "call-trace"]
    assert traces
    assert [s.cpu for s in traces] == [cpu_of[report.start_line + s.at] for s in traces]
    listed = why_text([triage_file(str(log))])
    for s in traces:
        assert any(f"call-trace (line {report.start_line + s.at}, CPU {s.cpu}): " in line for line in listed), listed
    if name == "264":  # the loop's frame is only on the RIP line of CPU 1's own dump (line 17 of the file)
        assert [s.cpu for s in traces] == [1, 0, 1]  # its own, CPU 0's NMI backtrace, the panic's (on CPU 1)
        assert {(e.locator.name, "RIP: 0010:d_walk+0x840/0xc80" in e.excerpt) for e in cited} == {
            ("guilty frame", True),
            ("spins in", True),
        }


@needs_fixtures
def test_fixture_console_reports_read_to_their_values() -> None:
    assert fixture_values() == json.loads((HERE / "fixture_consoles.json").read_text())


def _assert_why_evidence_resolves(logs: list[Path]) -> None:
    for log in logs:
        reports = list(scan_chunks([log.read_bytes()]))
        whys = explain_reports(reports)
        findings = [explained_finding(str(log), g, whys.get(g.first.start_line)) for g in group_reports(reports)]
        assert_evidence_resolves(findings)


@needs_fixtures
def test_fixture_why_evidence_resolves() -> None:
    _assert_why_evidence_resolves(sorted(FIXTURES.glob("*/console.log")))


def test_held_out_corpus_reports_read_to_their_values() -> None:
    assert held_out_values() == json.loads((HERE / "held_out_corpora.json").read_text())


def test_held_out_corpus_why_evidence_resolves() -> None:
    _assert_why_evidence_resolves(sorted(CORPORA.glob("*/*.log")))


def test_held_out_values_checked_by_hand() -> None:
    # A few of the values read from the reports by hand, each a reader's case (see the golden file for all).
    got = json.loads((HERE / "held_out_corpora.json").read_text())

    def first(name: str) -> dict[str, Any]:
        report: dict[str, Any] = got[name][0]
        return report

    # arm64 tag-based KASAN, the report cut after the cache line: offset 0x...020 - 0x...000 without the tags.
    kasan = first("syzbot/34-arm64-kasan-defer_free.log")
    assert kasan["facts"].items() >= {"access": "Write", "cache": "kmalloc-64", "object size": 64, "offset": 32}.items()
    assert {k: f for k, f, _ in kasan["stacks"]} == {"call-trace": "defer_free", "allocated": "range_tree_set",
                                                      "freed": "range_tree_destroy"}  # fmt: skip
    # Code: "... 75 5d <8b> 4a 1c ..." after a 3.x oops's call trace; RDX: 1000000000000000.
    gpf = first("satyr/rhbz-1140681.log")
    assert gpf["facts"]["faulting instruction"] == "mov ecx, dword ptr [rdx + 0x1c]"
    assert gpf["facts"]["base register"] == "rdx = 0x1000000000000000"
    # 32-bit arm: "(e5823000)" is str r3, [r2] with r2 = 00000009, the address of the NULL dereference.
    arm = first("satyr/arm-hung-task-oops-2.log")
    assert arm["facts"].items() >= {"faulting instruction": "str r3, [r2]", "access": "write", "address": "0x9"}.items()
    # arm64: "(f9400403)" is ldr x3, [x0, #8]; "WnR = 0": a read.
    arm64 = first("syzbot/25-arm64-paging-account_kernel_stack.log")
    assert arm64["facts"].items() >= {"faulting instruction": "ldr x3, [x0, #8]", "access": "read"}.items()
    # 3.x's "WARNING: at file:line".
    assert first("satyr/rhbz-1040900-ppc64-1.log")["facts"]["warning at"] == "arch/powerpc/platforms/pseries/eeh.c:390"
    # A task name with a "/" in "5 locks held by kworker/1:1/44:".
    assert ["kworker/1:1", 44] in first("syzbot/23-inconsistent-lock-state-do_softirq.log")["tasks"]
    # One lock per "#N:" of a locks-held list, however many inlined "at:" lines a symbolized log prints for it.
    held = [lock for lock in got["syzbot/08-hung-register_nexthop_notifier.log"][1]["locks"] if lock[0] == "held"]
    assert held == [["held", 0, "rcu_read_lock", "debug_show_all_locks+0x55/0x2a0"],
                    ["held", 6, "rtnl_mutex", "register_nexthop_notifier+0x84/0x290"],
                    ["held", 0, "rtnl_mutex", "rtnl_lock"]]  # fmt: skip
    # The hung task's own entry "#0: (rtnl_mutex), at: rtnl_lock ... [inline]", a frame of its stack.
    assert got["syzbot/08-hung-register_nexthop_notifier.log"][1]["facts"]["waits for lock"] == "rtnl_mutex"
    # arm64 "EC = 0x21: IABT" with "pc : 0x0": the CPU jumped to NULL.
    null_call = first("syzbot/09-arm64-null-read_cache_folio.log")
    assert null_call["facts"]["access"] == "instruction fetch"
    assert "a call or jump through a NULL function pointer" in null_call["cause"][1]
    inversion = first("syzbot/12-irq-inversion-writeout_period.log")["facts"]
    assert inversion.items() >= {"changed lock": "&p->sequence", "changed at": "writeout_period+0x94/0x11c",
                                 "other lock": "&xa->xa_lock#10"}.items()  # fmt: skip
    assert first("syzbot/04-kmsan-stack_depot.log")["facts"]["uninit created by"] == "stack_depot_save_flags"
    # "BUG: KASAN: double-free in dev_free", "Free of addr ...", the 16-byte kmalloc-16 object freed at offset 0.
    double_free = first("syzbot/39-kasan-double-free-dev_free.log")["facts"]
    assert double_free.items() >= {"bug": "double-free", "access": "free", "cache": "kmalloc-16", "offset": 0}.items()
    # Six "BUG: KASAN: ..." header lines (inlined refcount helpers), then "Read of size 4"; 228 bytes into 240.
    skb = first("syzbot/52-kasan-hci_req_sync_complete.log")["facts"]
    assert skb.items() >= {"size": 4, "cache": "skbuff_head_cache", "object size": 240, "offset": 228}.items()
    # "at: class_spinlock_irqsave_constructor ... [inline]" then "at: snd_timer_interrupt.part.0+0x31/0xd80": the
    # guard() wrapper is not where the lock was taken; nor "at: spin_lock ... [inline]" (PREEMPT_RT's softirq lock).
    assert first("syzbot/57-inconsistent-lock-state-snd_timer_interrupt.log")["facts"]["acquiring at"] == (
        "snd_timer_interrupt.part.0+0x31/0xd80"
    )
    deadlock = first("syzbot/56-deadlock-snd_pcm_drop.log")["facts"]
    assert (deadlock["acquiring at"], deadlock["holding at"]) == ("__local_bh_disable_ip+0x264/0x400",
                                                                  "snd_pcm_group_lock_irq")  # fmt: skip
    # KCSAN: "write to 0xffff88812ed8b730 of 8 bytes by task 16157 on cpu 1:" under strscpy from __set_task_comm,
    # "read to 0xffff88812ed8b733 of 1 bytes by task 16161 on cpu 0:", "value changed: 0x72 -> 0x34".
    race = first("syzbot/42-kcsan-strscpy.log")
    assert race["class"] == "data-race"
    assert race["facts"].items() >= {
        "access 1": "write", "access 1 size": 8, "access 1 by": "task 16157", "access 1 in": "strscpy",
        "access 1 caller": "__set_task_comm", "access 2": "read", "access 2 address": "0xffff88812ed8b733",
        "access 2 size": 1, "access 2 cpu": 0, "value changed": "0x72 -> 0x34", "pid": 16161, "task": "ext4lazyinit",
    }.items()  # fmt: skip
    # kmemleak: "unreferenced object 0xffff88812638cc40 (size 32):", 'comm "syz.0.17", pid 6104, jiffies 4294942640',
    # the backtrace past kmemleak, the slab internals and kmalloc_array_noprof: iovec_from_user (the title's).
    leak = got["syzbot/66-memory-leak-iovec_from_user.log"][1]
    assert leak["facts"] == {
        "object": "0xffff88812638cc40", "object size": 32, "task": "syz.0.17", "pid": 6104, "jiffies": 4294942640,
        "allocated by": "iovec_from_user", "root cause": "memory_leak",
    }  # fmt: skip
    # slab_post_alloc_hook, slab_alloc_node, __do_kmalloc_node, __kmalloc, kmalloc: io_alloc_async_data allocated.
    assert first("syzbot/67-kmsan-io_rw_fail.log")["facts"]["uninit created by"] == "io_alloc_async_data"


def update() -> None:
    """Rewrite the golden files from the current reader."""
    HERE.mkdir(exist_ok=True)
    if SHARED.is_dir():
        (HERE / "shared_corpus.json").write_text(json.dumps(shared_values(), indent=1, ensure_ascii=False) + "\n")
        print("updated why/shared_corpus.json")
    (HERE / "fixture_consoles.json").write_text(json.dumps(fixture_values(), indent=1, ensure_ascii=False) + "\n")
    print("updated why/fixture_consoles.json")
    (HERE / "held_out_corpora.json").write_text(json.dumps(held_out_values(), indent=1, ensure_ascii=False) + "\n")
    print("updated why/held_out_corpora.json")


if __name__ == "__main__":
    if "--update" in sys.argv[1:]:
        update()
    else:
        print(__doc__)
