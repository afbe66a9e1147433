"""An oops whose lines interleave with another task's stack, without caller ids: its stack's frames are not said.

The log is written here (x86, 4.15, no CONFIG_PRINTK_CALLER): CPU 1's dump_stack() of an allocation failure (its
frames under warn_alloc, down to the fixture kernel's kf_ioctl) is printed while CPU 0 oopses in interrupt context
in kf_rx; the two CPUs' lines alternate.  The oops's first foreign frame was CPU 1's kf_ioctl (ue22 #9, corpus 198).
"""

from __future__ import annotations

import itertools
from pathlib import Path

from forensics.model import NotAvailable
from forensics.pipelines.dmesg import analyse_logs

_OTHER = """\
[  159.247590] kf_alloc: vmalloc: allocation failure: 8589934588 bytes, mode:0x14080c0(GFP_KERNEL|__GFP_ZERO)
[  159.259380] kf_alloc cpuset=/ mems_allowed=0
[  159.264410] CPU: 1 PID: 30482 Comm: kf_alloc Tainted: G           O      4.15.0-kf #1
[  159.271770] Hardware name: QEMU Standard PC (i440FX + PIIX, 1996), BIOS 1.16.2-debian-1.16.2-1 04/01/2014
[  159.281117] Call Trace:
""".splitlines()
_OTHER_FRAMES = """\
[  159.283703]  dump_stack+0x194/0x257
[  159.283769]  warn_alloc+0x19a/0x2b0
[  159.321870]  __vmalloc_node_range+0x4f0/0x650
[  159.387872]  __vmalloc_node_flags_caller+0x50/0x60
[  159.407019]  kvmalloc_node+0x82/0xd0
[  159.464064]  kf_ioctl+0x394/0x8d0 [kf_buggy]
[  159.476389]  do_vfs_ioctl+0x1b1/0x1520
""".splitlines()
_OOPS = """\
[  159.296699] general protection fault: 0000 [#1] SMP KASAN
[  159.326325] Modules linked in: kf_buggy(O)
[  159.344522] CPU: 0 PID: 30477 Comm: kf_rx Tainted: G           O      4.15.0-kf #1
[  159.352661] Hardware name: QEMU Standard PC (i440FX + PIIX, 1996), BIOS 1.16.2-debian-1.16.2-1 04/01/2014
[  159.359421] RIP: 0010:kf_rx_parse+0x132d/0x1a30 [kf_buggy]
[  159.370248] RSP: 0018:ffff8801db406c20 EFLAGS: 00010246
[  159.392674] RAX: 0000000000000000 RBX: ffff8801b0c29b80 RCX: ffffffff84db22a1
""".splitlines()
_OOPS_TRACE = """\
[  159.494346] Call Trace:
[  159.506396]  <IRQ>
[  159.519518]  kf_rx+0x65/0x80 [kf_buggy]
[  159.523960]  net_rx_action+0x792/0x1910
[  159.530455]  __do_softirq+0x2d7/0xb85
[  159.536777]  irq_exit+0x1cc/0x200
[  159.540369]  </IRQ>
[  159.544488] Kernel panic - not syncing: Fatal exception in interrupt
""".splitlines()


def _write(tmp_path: Path, lines: list[str]) -> Path:
    log = tmp_path / "console.log"
    log.write_text("".join(f"{line}\n" for line in lines))
    return log


def _why(log: Path):  # type: ignore[no-untyped-def]
    (source,) = analyse_logs([str(log)], live=False).sources
    (report,) = source.reports
    return report, source.whys[report.start_line]


def test_an_oops_amid_another_tasks_stack_says_its_stack_unknown(tmp_path: Path) -> None:
    # CPU 1's frames alternate with CPU 0's oops lines, as the two consoles' writes met: from its second line on, past
    # the oops's "Call Trace:" and "<IRQ>" (kf_ioctl, CPU 1's, comes right after them).
    ours = [*_OOPS, *_OOPS_TRACE[:2]]
    mixed = [line for pair in itertools.zip_longest(ours, [None, None, None, *_OTHER_FRAMES]) for line in pair if line]
    report, why = _why(_write(tmp_path, [*_OTHER, *mixed, *_OOPS_TRACE[2:]]))
    assert report.title == "general protection fault in kf_rx_parse"  # the RIP line is the oops's own
    assert why.stacks == ()  # no first foreign frame of CPU 1's (kf_ioctl) nor of its own
    (said,) = [f for f in why.facts if f.name == "call-trace stack"]
    assert isinstance(said.value, NotAvailable)
    assert "interleave with another task's stack" in said.value.reason
    assert "frame line(s) between its header and its first stack, the first cited" in said.value.reason
    assert report.start_line + said.at in [n for n, _ in report.lines[1:]]  # a stray frame line of the oops


def test_an_oops_printed_alone_keeps_its_first_foreign_frame(tmp_path: Path) -> None:
    _, why = _why(_write(tmp_path, [*_OOPS, *_OOPS_TRACE]))
    assert [s.first_foreign.function for s in why.stacks if s.first_foreign is not None] == ["kf_rx"]
    assert not [f for f in why.facts if f.name == "call-trace stack"]


def test_stray_frames_stop_where_a_stack_heading_matches_on_every_bundled_log() -> None:
    # stray_frames looks for its stack heading with starts_stack (the heading's words first, then STACK_START), not
    # with STACK_START alone: the same answer on every line of the bundled logs, and the same stray frames of each
    # report as reading each line with the regex alone.
    from detectors.dmesg.frames import STACK_START, is_frame, starts_stack
    from detectors.dmesg.interleaved import _DIE_KINDS, stray_frames
    from detectors.dmesg.lines import parse_line
    from detectors.dmesg.scanner import scan_chunks

    def by_regex(report):  # type: ignore[no-untyped-def]
        if report.is_event or report.kind not in _DIE_KINDS or report.context is not None:
            return ()
        out = []
        for number, text in report.lines[1:]:
            body = parse_line(number, text).body
            if STACK_START.search(body) is not None:
                return tuple(out)
            if is_frame(body):
                out.append(number)
        return ()

    root = Path(__file__).parent
    logs = sorted([*root.glob("golden/*.log"), *root.glob("corpora/*/*.log")])
    assert logs
    headings = read = 0
    for log in logs:
        data = log.read_bytes()
        for line in data.decode("utf-8", "replace").splitlines():
            body = parse_line(1, line).body
            headings += starts_stack(body)
            assert starts_stack(body) == (STACK_START.search(body) is not None), line
        for report in scan_chunks([data]):
            read += report.kind in _DIE_KINDS and report.context is None
            assert stray_frames(report) == by_regex(report), (log.name, report.start_line)
    assert headings > 100 and read > 10  # the logs hold stack headings and oopses to agree on
