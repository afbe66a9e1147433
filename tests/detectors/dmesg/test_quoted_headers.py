"""A line that only quotes a report's title is no report: a program's syslog line, a field label before the header.

The logs are written here.  abrt (and other crash notifiers) log a notice naming the oops under their own syslog tag
beside the kernel's own lines, which syslog tags ``kernel``; syzkaller's annotated test logs open with ``TITLE:``
and ``ALT:`` lines naming the expected title.  Taken as the report, such a line made the real oops its "occurrence 2"
and the why read no fact of it (ue22 #1).
"""

from __future__ import annotations

from pathlib import Path

from detectors.dmesg.scanner import scan_text
from forensics.pipelines.dmesg import analyse_logs

_OOPS = """\
[  772.918915] BUG: unable to handle kernel paging request at ffff88002bde1e40
[  772.919010] IP: [<ffffffff82d4e304>] __memset+0x24/0x30
[  772.919010] PGD ae2c067 PUD ae2d067 PMD 7faa5067 PTE 800000002bde1060
[  772.919010] Oops: 0002 [#1] SMP KASAN
[  772.919010] CPU: 1 PID: 4070 Comm: kf-load Not tainted 4.8.0-rc3+ #33
[  772.919010] RIP: 0010:[<ffffffff82d4e304>]  [<ffffffff82d4e304>] __memset+0x24/0x30
[  772.919010] Call Trace:
[  772.919010]  [<ffffffff8168fa1d>] kf_fill+0x2d/0x40
[  772.919010]  [<ffffffff8168fb0e>] kf_write+0x6e/0x90
[  772.919010]  [<ffffffff8176c6a1>] vfs_write+0x1a1/0x5a0
[  772.919010] ---[ end trace 5b0c8d1f2a3e4d6f ]---
"""
_NOTICE = (
    "Dec  7 10:00:00 host abrt-notification[812]: System encountered a non-fatal error in kf_fill: "
    "BUG: unable to handle kernel paging request in kf_fill"
)


def _syslog(text: str) -> str:
    return "".join(f"Dec  7 10:00:01 host kernel: {line}\n" for line in text.splitlines())


def test_a_programs_syslog_line_quoting_the_title_is_no_report(tmp_path: Path) -> None:
    log = tmp_path / "messages"
    log.write_text(_NOTICE + "\n" + _syslog(_OOPS))
    reports = scan_text(log.read_text())
    assert [(r.start_line, r.rule) for r in reports] == [(2, "paging-request")]
    (source,) = analyse_logs([str(log)], live=False).sources
    (group,) = source.groups
    assert group.count == 1
    assert group.first.start_line == 2
    why = source.whys[2]
    facts = {fact.name: (fact.at, str(fact.value)) for fact in why.facts}
    assert facts["address"] == (0, "0xffff88002bde1e40")  # read from the kernel's header line, not "unknown"


def test_a_field_label_before_the_header_is_no_report() -> None:
    head = "TITLE: BUG: unable to handle kernel paging request in __memset\nALT: bad-access in __memset\n\n"
    reports = scan_text(head + _OOPS)
    assert [(r.start_line, r.rule) for r in reports] == [(4, "paging-request")]


def test_the_kernels_own_prefixes_before_a_header_still_start_a_report() -> None:
    # A subsystem's prefix (pr_fmt) before the header, a kernel line after another program's text on the console,
    # and a program's own log of the report it read (syzkaller's kmemleak lines, dated): reports.
    gap = "\n" * 30
    log = gap.join(
        (
            "[  281.646907] watchdog: BUG: soft lockup - CPU#1 stuck for 134s! [kf-spin:4588]\n"
            "[  281.646910] RIP: 0010:kf_spin+0x10/0x20\n"
            "[  281.646911] Call Trace:\n"
            "[  281.646912]  kf_ioctl+0x20/0x30\n",
            "login: [  290.000001] BUG: spinlock bad magic on CPU#0, kf/1\n"
            "[  290.000002] Call Trace:\n"
            "[  290.000003]  kf_lock+0x20/0x30\n",
            "2018/01/09 14:28:48 BUG: memory leak\n"
            "unreferenced object 0xffff8801d6f8e5c0 (size 64):\n"
            "  backtrace:\n"
            "    [<00000000a1b2c3d4>] kmalloc+0x10/0x20\n"
            "    [<00000000a1b2c3d5>] kf_alloc+0x10/0x20\n",
        )
    )
    assert [r.rule for r in scan_text(log)] == ["soft-lockup", "spinlock", "memory-leak"]
