"""Allocation failures: warn_alloc()'s header opens the event, with or without its Mem-Info block in the log.

Review ue22 #5: the scanner looked for an allocation failure only on meeting ``Mem-Info:`` and searched the 64 lines
above it for the header.  Every old-style ``vmalloc: allocation failure: N bytes`` line (4.x wording, not among the
headers searched for) and every ``page allocation failure`` whose Mem-Info dump is not in the log (ratelimited by
warn_alloc, a cut log) or lies further down (another CPU's report printed between them) was missed, while "could have
found" listed "allocation failures".  A ``vmalloc error:`` event (5.13+) was titled "page allocation failure:
order:vmalloc in ...".  The logs below are written for the tests (mm/page_alloc.c warn_alloc's wording).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from detectors.dmesg.events import build_event
from detectors.dmesg.findings import explain_reports
from detectors.dmesg.lines import parse_line
from detectors.dmesg.scanner import LogScanner, scan_chunks
from detectors.dmesg.why import memory_pressure
from forensics.model import NotAvailable
from forensics.pipelines.dmesg import DmesgResult, analyse_logs
from forensics.types.dmesg import PRESSURE_FACT, KernelReport, ReportKind, ZoneFree

_TRACE = [
    "Call Trace:",
    " dump_stack+0x194/0x257",
    " warn_alloc+0x19a/0x2b0",
    " __vmalloc_node_range+0x4f0/0x650",
    " kvmalloc_node+0x82/0xd0",
    " kf_table_alloc+0x21/0x30",
    " kf_setsockopt+0x394/0x8d0",
]
_MEM_INFO = [
    "Mem-Info:",
    "active_anon:60328 inactive_anon:64 isolated_anon:0",
    " free:1436134 free_pcp:424 free_cma:0",
    "Node 0 DMA32 free:2939248kB min:30316kB low:37892kB high:45468kB managed:3129216kB",
    "lowmem_reserve[]: 0 0 3510 3510",
    "1965969 pages RAM",
    "328420 pages reserved",
]


def _log(bodies: list[str], start: float = 159.0) -> bytes:
    return "".join(f"[{start + i / 1000:12.6f}] {body}\n" for i, body in enumerate(bodies)).encode()


def _events(data: bytes) -> list[KernelReport]:
    return [r for r in scan_chunks([data]) if r.is_event]


def _fact(report: KernelReport, name: str) -> object:
    why = explain_reports([report])[report.start_line]
    return next(f.value for f in why.facts if f.name == name)


def test_a_page_allocation_failure_without_its_mem_info_is_an_event_that_says_so() -> None:
    # Before: "0 report(s) and 0 event(s) kept" (no Mem-Info: line, nothing looked for the header).
    data = _log(
        [
            "kf-prog: page allocation failure: order:4, mode:0x40dc0(GFP_KERNEL|__GFP_COMP), nodemask=(null)",
            "CPU: 1 PID: 30482 Comm: kf-prog Not tainted 6.1.0 #1",
            *_TRACE,
            "eth0: link up",
        ]
    )
    (event,) = _events(data)
    assert event.kind is ReportKind.ALLOC_FAILURE
    assert event.title == "page allocation failure: order:4 in kf_table_alloc"
    assert (event.start_line, event.end_line) == (1, 9)
    memory = _fact(event, "memory state")
    assert isinstance(memory, NotAvailable) and memory.reason.startswith("not in the log"), memory


@pytest.mark.parametrize(
    ("header", "size"),
    [
        # 4.x (warn_alloc's format up to 5.12) and 5.13+ (a reason between the size and the mode).
        ("kf-prog: vmalloc: allocation failure: 8589934588 bytes, mode:0x14080c0(GFP_KERNEL|__GFP_ZERO)", 8589934588),
        ("kf-prog: vmalloc error: size 8589934588, vm_struct allocation failed, mode:0xcc0(GFP_KERNEL)", 8589934588),
    ],
)
def test_a_vmalloc_failure_is_titled_as_one_with_its_size(header: str, size: int) -> None:
    data = _log([header, "CPU: 1 PID: 30482 Comm: kf-prog Not tainted 6.1.0 #1", *_TRACE, *_MEM_INFO])
    (event,) = _events(data)
    # Not "page allocation failure: order:vmalloc in ...": vmalloc's own words, one title for both wordings.
    assert event.title == "vmalloc: allocation failure in kf_table_alloc"
    assert dict(event.details)["size"] == f"{size} bytes"
    assert event.end_line == 2 + len(_TRACE) + len(_MEM_INFO)  # the Mem-Info block is the event's
    assert _fact(event, "size bytes") == size
    memory = _fact(event, "memory state")
    assert memory == "Mem-Info: printed with it", memory


def test_a_vmalloc_failure_interleaved_with_an_oops_keeps_both_and_its_mem_info_further_down() -> None:
    # Two CPUs print at once without caller ids: the oops's header cuts the failure's trace short, and the Mem-Info
    # dump comes 70 lines below, after the oops's lines.  Before: no event (the header is neither among the words
    # searched for nor within the 64 lines above the Mem-Info).
    oops = [
        "general protection fault: 0000 [#1] SMP KASAN",
        "CPU: 0 PID: 30477 Comm: kf-other Not tainted 4.15.0+ #221",
        "RIP: 0010:kf_do_table+0x132d/0x1a30",
        "Call Trace:",
        " <IRQ>",
        *(f" kf_frame_{i}+0x10/0x20" for i in range(60)),
    ]
    data = _log(
        [
            "kf-prog: vmalloc: allocation failure: 8589934588 bytes, mode:0x14080c0(GFP_KERNEL|__GFP_ZERO)",
            "CPU: 1 PID: 30482 Comm: kf-prog Not tainted 4.15.0+ #221",
            "Call Trace:",
            " dump_stack+0x194/0x257",
            *oops,
            *_MEM_INFO,
            "Kernel panic - not syncing: Fatal exception in interrupt",
        ]
    )
    reports = list(scan_chunks([data]))
    (event,) = (r for r in reports if r.is_event)
    assert event.title.startswith("vmalloc: allocation failure in ")
    gpf = next(r for r in reports if not r.is_event)
    assert gpf.title == "general protection fault in kf_do_table" and gpf.start_line == 5
    mem_info = 5 + len(oops)
    assert (mem_info, data.decode().splitlines()[mem_info - 1]) in event.lines, event.lines
    assert data.decode().splitlines()[mem_info - 1].endswith("] Mem-Info:")
    assert _fact(event, "memory state") == "Mem-Info: printed with it"


def test_the_event_is_the_same_in_any_chunking() -> None:
    data = _log(
        [
            "kf-prog: page allocation failure: order:4, mode:0x40dc0(GFP_KERNEL), nodemask=(null)",
            *_TRACE,
            *(f"kf: noise {i}" for i in range(150)),
            "kf-prog: vmalloc error: size 4096, vm_struct allocation failed, mode:0xcc0(GFP_KERNEL)",
            *_TRACE,
            *_MEM_INFO,
        ]
    )
    whole = [(r.title, r.start_line, r.end_line) for r in scan_chunks([data])]
    assert [t for t, _, _ in whole] == [
        "page allocation failure: order:4 in kf_table_alloc",
        "vmalloc: allocation failure in kf_table_alloc",
    ]
    for size in (4096, 997, 61):
        scanner = LogScanner()
        got = [r for i in range(0, len(data), size) for r in scanner.feed(data[i : i + size])] + scanner.close()
        assert [(r.title, r.start_line, r.end_line) for r in got] == whole, size


def test_could_have_found_names_the_events_the_detector_reads(tmp_path: Path) -> None:
    log = tmp_path / "kern.log"
    log.write_bytes(_log(["eth0: link up"]))
    (examined,) = analyse_logs([str(log)], live=False).incident.examined
    said = examined.could_find[0]
    assert "allocation failures (page allocator and vmalloc" in said, said
    assert "network drops (nf_conntrack table full, TCP out of memory)" in said, said


def test_the_builder_reads_a_list_of_lines_as_the_scanner_s_window() -> None:
    # build_event takes any sequence of lines; the scanner's windows are searched as raw bytes, a list line by line.
    bodies = ["kf-prog: vmalloc error: size 4096, vm_struct allocation failed, mode:0xcc0(GFP_KERNEL)", *_TRACE]
    for tail in (_MEM_INFO, ["eth0: link up"]):
        data = _log([*bodies, "kf: noise", *tail])
        (scanned,) = _events(data)
        built = build_event([parse_line(n, t) for n, t in enumerate(data.decode().splitlines(), 1)])
        assert built is not None
        assert (built[0].title, built[0].lines, built[0].details) == (scanned.title, scanned.lines, scanned.details)
    assert dict(scanned.details) == {
        "size": "4096 bytes",
        "failed": "vm_struct allocation failed",
        "gfp": "0xcc0(GFP_KERNEL)",
    }


# ---------------------------------------------------------------- what the failure says of memory (review of 09900f47)
#
# Corpus syzkaller-linux-dev 198 (an 8 GiB vmalloc on a 6.2 GiB machine, zones far above their watermarks) was given
# "memory exhaustion by a user-space workload" (0.50): any allocation failure counted as memory that ran out.  Its
# next step spoke of the failed "order", which a vmalloc has none of.

#: A DMA32 zone far above its watermarks (the 6.2 GiB machine of _MEM_INFO), and one at its min.
_PLENTY = "Node 0 DMA32 free:2939248kB min:30316kB low:37892kB high:45468kB managed:3129216kB"
_SHORT = "Node 0 DMA32 free:30100kB min:30316kB low:37892kB high:45468kB managed:3129216kB"


def _analysed(tmp_path: Path, bodies: list[str]) -> DmesgResult:
    log = tmp_path / "kern.log"
    log.write_bytes(_log(bodies))
    return analyse_logs([str(log)], live=False)


def _statements(result: DmesgResult) -> list[str]:
    return [h.statement for h in result.hypotheses]


def test_a_vmalloc_larger_than_the_ram_is_an_unchecked_size_not_memory_exhaustion(tmp_path: Path) -> None:
    header = "kf-prog: vmalloc: allocation failure: 8589934588 bytes, mode:0x14080c0(GFP_KERNEL|__GFP_ZERO)"
    result = _analysed(tmp_path, [header, "CPU: 1 PID: 30482 Comm: kf-prog Not tainted 4.15.0+ #221", *_TRACE,
                                  *_MEM_INFO])  # fmt: skip
    said = _statements(result)
    # Before: "memory exhaustion by a user-space workload (no kernel leak was measured)" among them.
    assert not [s for s in said if "exhaustion" in s], said
    (cause,) = (h for h in result.hypotheses if "vmalloc" in h.statement)
    assert cause.statement.startswith("allocation failure: kf_table_alloc asked vmalloc for 8.0 GiB (8589934588 bytes)")
    assert cause.statement.endswith(
        "more than the machine's 6.2 GiB of RAM: an unchecked size from kf_table_alloc, not memory pressure"
    ), cause.statement
    # The next step: the size's origin and bounds check, in the caller and the function that called it.
    assert "bounds check" in cause.next_command and "in kf_table_alloc and its caller kf_setsockopt" in (
        cause.next_command
    ), cause.next_command
    (finding,) = result.incident.findings
    assert str(finding.fact(PRESSURE_FACT)).startswith("no: free pages above the low watermark (DMA32 free 2939248 kB")
    # The finding's step fits a vmalloc: its size, no order.  Before: "... the caller's GFP flags and order."
    assert "order" not in " ".join(finding.next_steps) and "size" in finding.next_steps[0], finding.next_steps


def test_a_page_allocation_failure_on_zones_at_their_watermark_is_memory_exhaustion(tmp_path: Path) -> None:
    header = "kf-prog: page allocation failure: order:0, mode:0x480020(GFP_ATOMIC), nodemask=(null)"
    mem_info = [_SHORT if line.startswith("Node 0 DMA32") else line for line in _MEM_INFO]
    result = _analysed(tmp_path, [header, "CPU: 1 PID: 30482 Comm: kf-prog Not tainted 6.1.0 #1", *_TRACE, *mem_info])
    (finding,) = result.incident.findings
    pressure = str(finding.fact(PRESSURE_FACT))
    assert pressure == "yes: every zone at or below its low watermark (DMA32 free 30100 kB, low watermark 37892 kB)"
    said = _statements(result)
    assert "memory exhaustion by a user-space workload (no kernel leak was measured)" in said, said
    (cause,) = (s for s in said if s.startswith("allocation failure:"))
    assert f"memory short: {pressure}" in cause, cause
    # The page allocator's step keeps its order.
    assert "order" in finding.next_steps[0], finding.next_steps


def test_an_allocation_failure_without_its_mem_info_shows_no_pressure(tmp_path: Path) -> None:
    header = "kf-prog: page allocation failure: order:4, mode:0x40dc0(GFP_KERNEL|__GFP_COMP), nodemask=(null)"
    result = _analysed(tmp_path, [header, *_TRACE, "eth0: link up"])
    (finding,) = result.incident.findings
    assert finding.fact(PRESSURE_FACT) == "unknown (no Mem-Info in the log)"
    said = _statements(result)
    assert not [s for s in said if "exhaustion" in s], said  # not assumed
    assert any("memory short: unknown (no Mem-Info in the log)" in s for s in said), said


def test_the_pressure_judges_the_zones_besides_dma_and_names_the_nodes() -> None:
    def zone(node: int, name: str, free: int, low: int | None, managed: int | None = 1000) -> ZoneFree:
        return ZoneFree(node, name, free, 10, low, 20, managed, 0)

    # DMA's pages are kept by lowmem_reserve: its free pages show nothing of the others.
    said, judged = memory_pressure([zone(0, "DMA", 15908, 200), zone(0, "Normal", 40, 50)])
    assert said.startswith("yes: ") and [z.zone for z in judged] == ["Normal"]
    said, _ = memory_pressure([zone(0, "Normal", 40, 50), zone(1, "Normal", 900, 50), zone(1, "Movable", 0, 0, 0)])
    assert said == "no: free pages above the low watermark (node 1 Normal free 900 kB, low watermark 50 kB)"
    assert memory_pressure([zone(0, "DMA", 15908, 200)])[0].startswith("no: ")  # DMA alone is judged
    assert memory_pressure([zone(0, "Movable", 0, 0, 0)])[0].startswith("unknown (")


@pytest.mark.parametrize(
    ("header", "words", "not_words"),
    [
        ("kf-prog: vmalloc error: size 4096, vm_struct allocation failed, mode:0xcc0(GFP_KERNEL)", "size", "order"),
        (
            "kf-prog: page allocation failure: order:4, mode:0x40dc0(GFP_KERNEL), nodemask=(null)",
            "order",
            "vmallocinfo",
        ),
    ],
)
def test_the_next_step_fits_the_kind_of_allocation(tmp_path: Path, header: str, words: str, not_words: str) -> None:
    # Before: "Check memory fragmentation (/proc/buddyinfo) and the caller's GFP flags and order." for both.
    (finding,) = _analysed(tmp_path, [header, *_TRACE]).incident.findings
    steps = " ".join(finding.next_steps)
    assert words in steps and not_words not in steps, steps


def test_the_caller_of_a_trace_another_cpu_s_report_cut_short_is_read_below_its_header(tmp_path: Path) -> None:
    # Corpus 198's shape: the failure's trace goes on between the fault's header and the fault's own stack (two CPUs,
    # no caller ids).  Before: "vmalloc: allocation failure in corrupted", its cause "in an unknown function".
    bodies = [
        "kf-prog: vmalloc: allocation failure: 8589934588 bytes, mode:0x14080c0(GFP_KERNEL|__GFP_ZERO)",
        "CPU: 1 PID: 30482 Comm: kf-prog Not tainted 4.15.0+ #221",
        "Call Trace:",
        " dump_stack+0x194/0x257",
        " warn_alloc+0x19a/0x2b0",
        "general protection fault: 0000 [#1] SMP KASAN",
        " __vmalloc_node_range+0x4f0/0x650",
        "Modules linked in:",
        " ? kf_table_alloc+0x21/0x30",
        "CPU: 0 PID: 30477 Comm: kf-other Not tainted 4.15.0+ #221",
        " kvmalloc_node+0x82/0xd0",
        "RIP: 0010:kf_do_table+0x132d/0x1a30",
        " kf_table_alloc+0x21/0x30",
        "RSP: 0018:ffff8801db406c20 EFLAGS: 00010246",
        " ? kf_noise+0x1/0x2",
        " kf_setsockopt+0x394/0x8d0",
        "Call Trace:",
        " <IRQ>",
        *(f" kf_frame_{i}+0x10/0x20" for i in range(30)),
        *_MEM_INFO,
        "Kernel panic - not syncing: Fatal exception in interrupt",
    ]
    data = _log(bodies)
    reports = list(scan_chunks([data]))
    (event,) = (r for r in reports if r.is_event)
    assert event.title == "vmalloc: allocation failure in kf_table_alloc"
    assert [r.title for r in reports if not r.is_event] == ["general protection fault in kf_do_table"]
    assert _fact(event, "caller") == "kf_table_alloc"
    why = explain_reports([event])[event.start_line]
    assert next(f.at for f in why.facts if f.name == "caller") == 12  # the reliable frame's line (13), not "?"'s
    for size in (4096, 997, 61):
        scanner = LogScanner()
        got = [r for i in range(0, len(data), size) for r in scanner.feed(data[i : i + size])] + scanner.close()
        assert [(r.title, r.start_line, r.end_line) for r in got] == [
            (r.title, r.start_line, r.end_line) for r in reports
        ], size
    (cause,) = (h for h in _analysed(tmp_path, bodies).hypotheses if "vmalloc" in h.statement)
    assert "an unchecked size from kf_table_alloc" in cause.statement, cause.statement
    assert "in kf_table_alloc and its caller kf_setsockopt" in cause.next_command, cause.next_command


@pytest.mark.parametrize(
    ("header", "said"),
    [
        # -4 as size_t: no RAM figure is needed to tell it is no size memory could meet.
        (
            "kf-prog: vmalloc error: size 18446744073709551612, vm_struct allocation failed, mode:0xcc0(GFP_KERNEL)",
            "a size with its top bit set (0xfffffffffffffffc): a negative length taken as size_t: an unchecked size "
            "from kf_table_alloc, not memory pressure",
        ),
        # vmalloc refuses a size of 0 before allocating anything (corpus 218's line 10 has one); review ue23 #9.
        (
            "kf-prog: vmalloc: allocation failure: 0 bytes, mode:0x14000c0(GFP_KERNEL), nodemask=(null)",
            "a size of 0, which vmalloc refuses before allocating anything: a size bug in kf_table_alloc, not memory "
            "pressure",
        ),
    ],
)
def test_a_vmalloc_of_no_possible_size_is_the_caller_s_without_its_mem_info(
    tmp_path: Path, header: str, said: str
) -> None:
    # Before: stated with "memory short: unknown (no Mem-Info in the log)", as if memory might have been short.
    (cause,) = (h for h in _analysed(tmp_path, [header, *_TRACE]).hypotheses if "vmalloc" in h.statement)
    assert cause.statement.endswith(said), cause.statement
    assert "memory short" not in cause.statement
    if "18446744073709551612" in header:
        assert "asked vmalloc for 18446744073709551612 bytes (0xcc0" in cause.statement  # not "17179869184.0 GiB"
    assert "bounds check" in cause.next_command, cause.next_command


#: show_free_areas()'s per-order lines of a DMA and a DMA32 zone: DMA32's largest free block is of order 3 (32 kB);
#: DMA's one order-10 block (4096 kB) is left out beside DMA32, as the pressure's judgement does.
_DMA_LISTS = "Node 0 DMA: 1*4kB (U) 0*8kB 1*16kB (U) 3*4096kB (M) = 12308kB"
_DMA32_LISTS = "Node 0 DMA32: 900*4kB (UME) 120*8kB (UME) 40*16kB (UM) 2*32kB (M) = 5264kB"


@pytest.mark.parametrize(
    ("order", "mem_info", "said"),
    [
        # Before: " — a high-order request fails on fragmented memory" in each, the free lists unread.
        (4, [*_MEM_INFO, _DMA_LISTS, _DMA32_LISTS], "fragmentation: yes: no free block of order 4 (64 kB) or above in "
         "DMA32, per its free lists"),
        (3, [*_MEM_INFO, _DMA_LISTS, _DMA32_LISTS], "fragmentation: no: free blocks of order 3 (32 kB) or above in its "
         "free lists (DMA32 2); the request's zones or migrate type may not reach them"),
        # The pieces of a line interleaved with other output are not read: not a value, so unknown.
        (4, [*_MEM_INFO, "Node 0 DMA32: 900*4kB (UME) ", "eth0: link up", "2*32kB (M) = 3664kB"],
         "fragmentation: unknown (its per-order free lists are not in the log whole, a line a zone)"),
        (4, [], "fragmentation: unknown (no Mem-Info in the log)"),
    ],
)  # fmt: skip
def test_a_high_order_failure_says_what_its_free_lists_show(
    tmp_path: Path, order: int, mem_info: list[str], said: str
) -> None:
    header = f"kf-prog: page allocation failure: order:{order}, mode:0x40dc0(GFP_KERNEL), nodemask=(null)"
    log = [header, "CPU: 1 PID: 30482 Comm: kf-prog Not tainted 6.1.0 #1", *_TRACE, *mem_info]
    (cause,) = (h for h in _analysed(tmp_path, log).hypotheses if h.statement.startswith("allocation failure:"))
    assert cause.statement.endswith(said), cause.statement
    assert "fragmented memory" not in cause.statement
    if said.startswith("fragmentation: yes") or said.startswith("fragmentation: no"):
        data = _log(log)
        (event,) = _events(data)
        why = explain_reports([event])[event.start_line]
        lists = log.index(_DMA32_LISTS)
        assert lists - (event.start_line - 1) in why.cause_at  # the free lists' line is cited


# Review ue23 #2 (corpus syzkaller-linux-dev 206's shape): a vmalloc failure printed at once with a suspicious-RCU
# warning of another task, without caller ids.  The failure's header and trace stand between the warning's header and
# its own stack.  Before: no event ("0 event(s) kept"), and the warning titled by the failure's caller.
_RCU_HEAD = [
    "=============================",
    "WARNING: suspicious RCU usage",
    "4.15.0+ #222 Not tainted",
    "kf-prog: vmalloc: allocation failure: 17178296320 bytes, mode:0x14080c0(GFP_KERNEL|__GFP_ZERO), nodemask=(null)",
    "-----------------------------",
    "./include/linux/rcupdate.h:302 Illegal context switch in RCU read-side critical section!",
    "other info that might help us debug this:",
    "rcu_scheduler_active = 2, debug_locks = 1",
    "1 lock held by kf-other/5953:",
    "CPU: 0 PID: 5955 Comm: kf-prog Not tainted 4.15.0+ #222",
    *_TRACE,
    " do_syscall_64+0x282/0x940",
    " entry_SYSCALL_64_after_hwframe+0x26/0x9b",
    "RIP: 0033:0x453a59",
    "RSP: 002b:00007fd7139c7c68 EFLAGS: 00000246 ORIG_RAX: 0000000000000036",
]
_RCU_OWN_STACK = [
    "CPU: 1 PID: 5953 Comm: kf-other Not tainted 4.15.0+ #222",
    "Call Trace:",
    " dump_stack+0x194/0x257",
    " lockdep_rcu_suspicious+0x123/0x170",
    " ___might_sleep+0x385/0x470",
    " __might_sleep+0x95/0x190",
    " kmem_cache_alloc_trace+0x299/0x740",
    " kf_conn_alloc+0xc8/0x380",
    " kf_sendmsg+0xda3/0x2390",
]


def test_a_failure_header_inside_another_report_s_lines_opens_its_event_and_keeps_its_stack() -> None:
    data = _log([*_RCU_HEAD, *_RCU_OWN_STACK])
    for chunks in ([data], [data[i : i + 61] for i in range(0, len(data), 61)]):
        found = list(scan_chunks(chunks))
        (warning,) = (r for r in found if not r.is_event)
        (event,) = (r for r in found if r.is_event)
        # Before: "WARNING: suspicious RCU usage in kf_table_alloc" (the failure's caller), and no event.
        assert warning.title == "WARNING: suspicious RCU usage in kf_conn_alloc"
        assert warning.start_line == 2 and not any(f.function == "warn_alloc" for f in warning.trace)
        assert event.title == "vmalloc: allocation failure in kf_table_alloc"
        assert event.start_line == 4 and event.start_line < warning.end_line  # inside the warning's extent
        assert [r.start_line for r in found] == sorted(r.start_line for r in found)  # log order


def test_a_report_whose_only_stack_is_the_failure_s_says_why_its_frame_is_unknown() -> None:
    found = list(scan_chunks([_log(_RCU_HEAD)]))
    (warning,) = (r for r in found if not r.is_event)
    # Before: the warning named kf_table_alloc, the failure's caller; now its frame is unknown, and why.
    assert warning.title == "WARNING: suspicious RCU usage in corrupted"
    assert isinstance(warning.frame, NotAvailable)
    assert "allocation failure's" in warning.frame.reason and "line 4" in warning.frame.reason
    assert warning.corrupted
    assert [r.title for r in found if r.is_event] == ["vmalloc: allocation failure in kf_table_alloc"]


def test_a_failure_header_among_another_cpu_s_report_lines_is_an_event() -> None:
    # Corpus 492's shape: caller ids, the [C1] header among the lines of [C0]'s stall report that took [C1]'s
    # backtrace.  Before: "1 report(s) and 0 event(s) kept".
    bodies = [
        "[    C0] rcu: INFO: rcu_preempt self-detected stall on CPU",
        "[    C0] rcu: \t0-....: (10500 ticks this GP) idle=b06/1/0x4000000000000004 softirq=1/1 fqs=5240",
        "[    C0] NMI backtrace for cpu 0",
        "[    C0] CPU: 0 PID: 28547 Comm: kf-other Not tainted 5.3.0-rc6 #120",
        "[    C0] Call Trace:",
        "[    C0]  <IRQ>",
        "[    C0]  dump_stack+0x172/0x1f0",
        "[    C1] CPU: 1 PID: 30 Comm: kworker/u4:4 Not tainted 5.3.0-rc6 #120",
        "[    C1] kworker/u4:4: page allocation failure: order:0, mode:0x40a20(GFP_ATOMIC|__GFP_COMP), nodemask=(null)",
        "[    C0]  nmi_cpu_backtrace.cold+0x70/0xb2",
        "[    C0]  rcu_dump_cpu_stacks+0x183/0x1cf",
        "[    C0]  kf_ioctl+0x10/0x20",
        "[    C0]  </IRQ>",
    ]
    data = "".join(f"[ 3239.{500000 + i:06d}]{body}\n" for i, body in enumerate(bodies)).encode()
    found = list(scan_chunks([data]))
    assert [r.is_event for r in found] == [False, True], [r.title for r in found]
    assert found[1].title.startswith("page allocation failure: order:0 in ") and found[1].start_line == 9


def test_a_failure_whose_trace_is_cut_off_takes_not_the_next_report_s_stack() -> None:
    # Corpus 218's shape: the failure's header between a WARNING and its panic, its own trace not in the log.  Before:
    # no event; with the event alone, "vmalloc: allocation failure in kf_obj_freed", the panic's frame.
    data = _log(
        [
            "WARNING: CPU: 1 PID: 16250 at lib/debugobjects.c:291 debug_print_object+0x166/0x220",
            "kf-prog: vmalloc: allocation failure: 0 bytes, mode:0x14000c0(GFP_KERNEL), nodemask=(null)",
            "Kernel panic - not syncing: panic_on_warn set ...",
            "CPU: 1 PID: 16250 Comm: kworker/u4:6 Not tainted 4.16.0-rc5+ #264",
            "Call Trace:",
            " dump_stack+0x194/0x24d",
            " panic+0x1e4/0x41c",
            " __warn+0x1dc/0x200",
            " report_bug+0x1f4/0x2b0",
            "RIP: 0010:debug_print_object+0x166/0x220",
            " kf_obj_freed+0x662/0xf1f",
            " kfree+0xc7/0x260",
            " kf_work+0x2e7/0x6c0",
        ]
    )
    found = list(scan_chunks([data]))
    (event,) = (r for r in found if r.is_event)
    assert event.title == "vmalloc: allocation failure in corrupted"
    assert (event.start_line, event.end_line) == (2, 2) and not event.trace
    (warning,) = (r for r in found if not r.is_event)
    assert warning.title == "WARNING: ODEBUG bug in kf_obj_freed", warning.title  # its own frame, as before
