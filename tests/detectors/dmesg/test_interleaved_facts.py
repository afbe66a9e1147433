"""Two CPUs' oopses interleaved in one console capture (detectors/dmesg/interleaved.py).

A netconsole capture without printk caller ids: a page fault on CPU 5 and a general protection fault on CPU 2,
their lines mixed as the two CPUs printed them.  Which ``#PF:``, ``RIP:`` or ``Call Trace:`` line is whose cannot
be known: the GPF report (the scanner's lines 3 to the end) must not state them as its facts.  The same two
reports with caller ids (``[T812]``, ``[T5511]``) are split by the scanner, and read.
"""

from __future__ import annotations

from pathlib import Path

from detectors.dmesg.interleaved import mixed_dumps
from forensics.model import NotAvailable
from forensics.pipelines.dmesg import analyse_logs
from forensics.types.dmesg import ReportWhy
from forensics.types.dmesg_result import DmesgResult
from tests.helpers import assert_evidence_resolves

# (caller, line): the page fault's lines are kswapd0's (T812), the GPF's postgres's (T5511), printed at once.
_LINES = (
    ("T812", "BUG: unable to handle page fault for address: ffff888100000000"),
    ("T812", "#PF: supervisor read access in kernel mode"),
    ("T5511", "general protection fault, probably for non-canonical address 0xdead000000000122: 0000 [#2] SMP NOPTI"),
    ("T812", "#PF: error_code(0x0000) - not-present page"),
    ("T812", "Oops: 0000 [#1] PREEMPT SMP NOPTI"),
    ("T5511", "CPU: 2 PID: 5511 Comm: postgres Not tainted 6.6.30 #1"),
    ("T812", "CPU: 5 PID: 812 Comm: kswapd0 Not tainted 6.6.30 #1"),
    ("T5511", "RIP: 0010:list_del_entry_valid_or_report+0x12/0xc0"),
    ("T812", "RIP: 0010:copy_page_to_iter+0x9b/0x190"),
    ("T5511", "Call Trace:"),
    ("T812", "Call Trace:"),
    ("T5511", " <TASK>"),
    ("T812", " <TASK>"),
    ("T5511", " shrink_folio_list+0x6a1/0xd20"),
    ("T812", " filemap_read+0x1e4/0x340"),
    ("T5511", " shrink_inactive_list+0x1a6/0x410"),
    ("T812", " vfs_read+0x1ff/0x310"),
    ("T5511", " </TASK>"),
    ("T812", " </TASK>"),
)
_NOT_READ = "not read (interleaved with the report at line 1)"


def _run(tmp_path: Path, text: str) -> DmesgResult:
    log = tmp_path / "netconsole.log"
    log.write_text(text)
    return analyse_logs([str(log)], live=False)


def _why(result: DmesgResult, title_start: str) -> tuple[int, ReportWhy]:
    source = result.sources[0]
    report = next(r for r in source.reports if r.title.startswith(title_start))
    return report.start_line, source.whys[report.start_line]


def test_facts_of_lines_another_cpus_report_may_own_are_not_read(tmp_path: Path) -> None:
    result = _run(tmp_path, "".join(f"{text}\n" for _, text in _LINES))
    first, why = _why(result, "general protection fault")
    assert first == 3
    by_line = {(f.name, first + f.at): f.value for f in why.facts}
    # Its own header is its own: the address and the error code it prints.
    assert by_line[("address", 3)] == "0xdead000000000122"
    assert by_line[("error code", 3)] == "0x0000"
    # The page fault's #PF: line, and which of the two RIP: lines is its own: not read.
    for key in (("error code", 4), ("page", 4), ("faulting function", 8)):
        value = by_line[key]
        assert isinstance(value, NotAvailable) and value.reason == _NOT_READ, key
    assert not why.stacks and why.cause is None
    # The page fault keeps what it printed before the GPF's header.
    _, fault = _why(result, "BUG: unable to handle")
    assert {(f.name, f.value) for f in fault.facts} >= {("access", "read")}
    # The finding's CPU, task and taint: two dumps' CPU: lines, neither said to be its own.
    gpf = next(f for f in result.incident.findings if f.title.startswith("general protection fault"))
    facts = {f.name: f.value for f in gpf.facts}
    assert facts["cpu"].startswith("not read (its lines print two dumps, interleaved: CPU: 2 PID: 5511; CPU: 5")
    assert facts["faulting function"].startswith("not available: " + _NOT_READ)
    assert_evidence_resolves(list(result.incident.findings))


def test_with_caller_ids_each_report_reads_its_own_lines(tmp_path: Path) -> None:
    text = "".join(f"[  220.{i:06d}][{caller}] {body}\n" for i, (caller, body) in enumerate(_LINES))
    result = _run(tmp_path, text)
    _, why = _why(result, "general protection fault")
    assert why.fact("faulting function") == "list_del_entry_valid_or_report+0x12/0xc0"
    assert all(not isinstance(f.value, NotAvailable) for f in why.facts)
    gpf = next(f for f in result.incident.findings if f.title.startswith("general protection fault"))
    assert {f.name: f.value for f in gpf.facts}["cpu"] == "2"


def test_a_dumps_kernel_and_user_registers_are_not_two_dumps(tmp_path: Path) -> None:
    # One CPU's dump of a syscall prints the kernel's registers (RIP: 0010:) and, at the end of its trace, the user
    # ones (RIP: 0033:): corpus 718's and 720's RCU stalls were said to print "two dumps, interleaved" (their CPU, PID
    # and taint "not read"), keyed by "RIP" alone.
    text = "".join(
        f"[  146.94{i:04d}] {line}\n"
        for i, line in enumerate(
            [
                "general protection fault, probably for non-canonical address 0xdead000000000122: 0000 [#1] SMP NOPTI",
                "CPU: 0 PID: 5599 Comm: syz.0.104 Not tainted 6.10.0-rc5 #20",
                "RIP: 0010:rb_insert_color+0xa/0x5e0",
                "RSP: 0018:ffffc90000a3fb50 EFLAGS: 00010246",
                "RIP: 0033:0x7f9e69847189",
                "RSP: 002b:00007ffd4a0c1d28 EFLAGS: 00000246 ORIG_RAX: 0000000000000010",
            ]
        )
    )
    result = _run(tmp_path, text)
    (report,) = result.sources[0].reports
    assert report.corrupted, report  # (mixed_dumps asks only of a damaged report)
    assert mixed_dumps(report) is None
    (finding,) = result.incident.findings
    assert (finding.fact("cpu"), finding.fact("pid")) == ("0", "5599")
