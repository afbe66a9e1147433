"""A lockdep splat raised by the printing of a BUG is the BUG's consequence; the oops's tail stays with the BUG.

The log is written here in the kernel's formats (x86, 5.0): ``kernel BUG at`` fires in the fixture kernel's
``kf_ring_push`` under ``&ring->lock``; report_bug()'s printk takes ``console_owner``, whose order against that lock
lockdep reports in the middle of the oops.  Its stack runs lock_acquire, console_unlock, vprintk_emit, printk,
report_bug, down to the BUG's exception frame (RIP, Code).  After the splat the oops ends: its end marker, the
registers again, the panic on panic_on_oops.  The splat was hypothesis 1 over the BUG, and the end marker, the
panic and the exception frame's Code were credited to it (ue22 #4, syzkaller's corpus log 352).
"""

from __future__ import annotations

from pathlib import Path

from forensics.pipelines.dmesg import analyse_logs

_CODE = (
    "Code: 48 89 df e8 6a 14 10 00 48 8b 43 08 48 85 c0 74 0c 48 89 df e8 5a 14 10 00 0f 0b 48 c7 c6 a0 63 52 88 "
    "<0f> 0b 48 c7 c6 c0 64 52 88 4c 89 e7 e8 00 00 00 00 0f 0b 48 89 cf"
)
_LOG = f"""\
[  611.669874] ------------[ cut here ]------------
[  611.678706] kernel BUG at drivers/kf/kf_buggy.c:212!
[  611.684081] invalid opcode: 0000 [#1] PREEMPT SMP KASAN
[  611.690145] CPU: 0 PID: 212 Comm: kf_writer Tainted: G           O      5.0.0-kf #1
[  611.698804] Hardware name: QEMU Standard PC (i440FX + PIIX, 1996), BIOS 1.16.2-debian-1.16.2-1 04/01/2014
[  611.708865] RIP: 0010:kf_ring_push+0x4a8/0x680 [kf_buggy]
[  611.714748] {_CODE}
[  611.734348] RSP: 0018:ffff8880a78e6f58 EFLAGS: 00010007
[  611.740404] RAX: 0000000000000000 RBX: 0000000000000000 RCX: ffff88812fffc7e0
[  611.819679] Call Trace:
[  611.822969]  kf_write+0x91/0x140 [kf_buggy]
[  611.822975]  vfs_write+0xc5/0x3a0
[  611.822980]  ksys_write+0x5f/0xe0
[  611.822985]  do_syscall_64+0x3b/0x90
[  611.822990]  entry_SYSCALL_64_after_hwframe+0x44/0xa9
[  611.822995] Modules linked in: kf_buggy(O)
[  612.217749] \n\
[  612.217756] ======================================================
[  612.217762] WARNING: possible circular locking dependency detected
[  612.217767] 5.0.0-kf #1 Tainted: G           O
[  612.217773] ------------------------------------------------------
[  612.217778] kf_writer/212 is trying to acquire lock:
[  612.217782] 00000000a0848583 (console_owner){{-.-.}}, at: console_unlock+0x4ac/0x1040
[  612.217799] \n\
[  612.217803] but task is already holding lock:
[  612.217807] 00000000c8e67de2 (&ring->lock){{..-.}}, at: kf_ring_push+0x6f/0x680 [kf_buggy]
[  612.217824] \n\
[  612.217829] which lock already depends on the new lock.
[  612.217832] \n\
[  612.217841] the existing dependency chain (in reverse order) is:
[  612.217843] \n\
[  612.217846] -> #1 (&ring->lock){{..-.}}:
[  612.217863]        _raw_spin_lock_irqsave+0x95/0xcd
[  612.217868]        kf_ring_drain+0x2c/0x90 [kf_buggy]
[  612.217873]        serial8250_console_write+0x2b1/0x910
[  612.217878]        console_unlock+0x8b2/0x1040
[  612.217883] \n\
[  612.217886] -> #0 (console_owner){{-.-.}}:
[  612.217890]        lock_acquire+0x1db/0x570
[  612.217895]        console_unlock+0x516/0x1040
[  612.217900]        vprintk_emit+0x370/0x960
[  612.217905]        printk+0xba/0xed
[  612.217910]        report_bug.cold+0x11/0x5e
[  612.217915] \n\
[  612.217920] other info that might help us debug this:
[  612.217925] \n\
[  612.217930]  Possible unsafe locking scenario:
[  612.217935] \n\
[  612.217940]        CPU0                    CPU1
[  612.217945]        ----                    ----
[  612.217950]   lock(&ring->lock);
[  612.217955]                                lock(console_owner);
[  612.217960]                                lock(&ring->lock);
[  612.217965]   lock(console_owner);
[  612.217970] \n\
[  612.217975]  *** DEADLOCK ***
[  612.217980] \n\
[  612.218400] 2 locks held by kf_writer/212:
[  612.218410]  #0: 00000000c8e67de2 (&ring->lock){{..-.}}, at: kf_ring_push+0x6f/0x680 [kf_buggy]
[  612.218418]  #1: 0000000001912981 (console_lock){{+.+.}}, at: vprintk_emit+0x351/0x960
[  612.218437] \n\
[  612.218441] stack backtrace:
[  612.218448] CPU: 0 PID: 212 Comm: kf_writer Tainted: G           O      5.0.0-kf #1
[  612.218455] Hardware name: QEMU Standard PC (i440FX + PIIX, 1996), BIOS 1.16.2-debian-1.16.2-1 04/01/2014
[  612.218459] Call Trace:
[  612.218463]  dump_stack+0x1db/0x2d0
[  612.218483]  print_circular_bug.isra.0.cold+0x1cc/0x28f
[  612.218487]  __lock_acquire+0x2fed/0x4a10
[  612.218528]  lock_acquire+0x1db/0x570
[  612.218546]  console_unlock+0x516/0x1040
[  612.218575]  vprintk_emit+0x370/0x960
[  612.218593]  vprintk_default+0x28/0x30
[  612.218597]  vprintk_func+0x7e/0x189
[  612.218601]  printk+0xba/0xed
[  612.218648]  report_bug.cold+0x11/0x5e
[  612.218653]  do_error_trap+0x11b/0x200
[  612.218657]  do_invalid_op+0x37/0x50
[  612.218666]  invalid_op+0x14/0x20
[  612.218671] RIP: 0010:kf_ring_push+0x4a8/0x680 [kf_buggy]
[  612.218685] {_CODE}
[  612.218690] RSP: 0018:ffff8880a78e6f58 EFLAGS: 00010007
[  612.218699] RAX: 0000000000000000 RBX: 0000000000000000 RCX: ffff88812fffc7e0
[  612.218774]  kf_write+0x91/0x140 [kf_buggy]
[  612.218785]  vfs_write+0xc5/0x3a0
[  612.218811]  ksys_write+0x5f/0xe0
[  612.218816]  do_syscall_64+0x3b/0x90
[  612.218821]  entry_SYSCALL_64_after_hwframe+0x44/0xa9
[  613.396500] ---[ end trace b088aebfc4c7ea50 ]---
[  613.401959] RIP: 0010:kf_ring_push+0x4a8/0x680 [kf_buggy]
[  613.407858] {_CODE}
[  613.427450] RSP: 0018:ffff8880a78e6f58 EFLAGS: 00010007
[  613.433504] RAX: 0000000000000000 RBX: 0000000000000000 RCX: ffff88812fffc7e0
[  613.512761] Kernel panic - not syncing: Fatal exception
[  614.705651] Rebooting in 86400 seconds..
"""
_BUG = "kernel BUG in kf_ring_push"
_SPLAT = "possible deadlock in kf_ring_push"


def test_a_splat_raised_by_a_bugs_printing_is_its_consequence_and_the_tail_stays_with_the_bug(tmp_path: Path) -> None:
    log = tmp_path / "console.log"
    log.write_text(_LOG)
    lines = _LOG.splitlines()
    marker = next(i for i, line in enumerate(lines, 1) if "---[ end trace" in line)
    panic = next(i for i, line in enumerate(lines, 1) if "Kernel panic" in line)
    result = analyse_logs([str(log)], live=False)
    (source,) = result.sources
    by_title = {r.title: r for r in source.reports}
    bug, splat = by_title[_BUG], by_title[_SPLAT]
    # The splat ends before the oops's end marker: the marker, the registers again and the panic are the BUG's.
    assert bug.start_line == 2 and splat.start_line < marker
    assert splat.end_line < marker and not splat.panicked
    assert source.whys[splat.start_line].code is None  # the exception frame's Code: is the BUG's instruction
    panic_why = next(w for at, w in source.whys.items() if at == panic)
    follows = {f.name: f.value for f in panic_why.facts}
    assert follows["follows report"] == _BUG
    # Hypothesis 1 is the BUG's; the splat's comes after it, saying what it followed from.
    findings = {f.title: f for f in result.incident.findings}
    link = findings[_SPLAT].consequence_of
    assert link is not None and link.root == findings[_BUG].id
    assert "raised by its printing" in link.how and "report_bug" in link.how
    ranks = {i: h.rank for h in result.hypotheses for i in h.finding_ids}
    assert ranks[findings[_BUG].id] < ranks[findings[_SPLAT].id]
    splat_hypothesis = next(h for h in result.hypotheses if findings[_SPLAT].id in h.finding_ids)
    assert any(a.startswith(f"it followed from {_BUG}") for a in splat_hypothesis.against)
