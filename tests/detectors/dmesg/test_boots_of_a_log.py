"""A log of two boots: each finding says which boot it is of, and `report`'s main problem of a crash is of its boot.

A reviewer's log held a WARNING in boot 1 and, after a reboot (a second "Linux version" banner), an oops in boot 2:
`report` called the earlier boot's WARNING "the main problem found" of the later boot's crash, which a reboot
separates from it, and no boot was named anywhere.  The lines are printed as the kernel prints them (a boot's banner
at 0.000000, init/main.c; __warn(); the x86 page fault oops).
"""

from __future__ import annotations

from pathlib import Path

from detectors.incident.hypotheses import plain_summary
from forensics.pipelines.dmesg import analyse_logs
from forensics.types.dmesg import BOOT_FACT

BANNER = "Linux version 6.1.0-18-amd64 (debian-kernel@lists.debian.org) (gcc-12 (Debian 12.2.0-14) 12.2.0) #1 SMP"
TAINT = "Tainted: P           OE      6.1.0-18-amd64 #1  Debian 6.1.76-1"
BOOT1 = [
    (0.0, BANNER),
    (0.0, "Command line: BOOT_IMAGE=/boot/vmlinuz-6.1.0-18-amd64 root=UUID=1b2c ro quiet"),
    (1811.0, "------------[ cut here ]------------"),
    (1811.0, "WARNING: CPU: 2 PID: 901 at drivers/gpu/drm/i915/intel_runtime_pm.c:635 "
             "intel_runtime_pm_driver_release+0x4f/0x60 [i915]"),
    (1811.0, f"CPU: 2 PID: 901 Comm: Xorg {TAINT}"),
    (1811.0, "RIP: 0010:intel_runtime_pm_driver_release+0x4f/0x60 [i915]"),
    (1811.0, "Call Trace:"),
    (1811.0, " <TASK>"),
    (1811.0, " i915_driver_release+0x6b/0x80 [i915]"),
    (1811.0, " drm_dev_release+0x21/0x40 [drm]"),
    (1811.0, " </TASK>"),
    (1811.0, "---[ end trace 0000000000000000 ]---"),
]  # fmt: skip
BOOT2 = [
    (0.0, BANNER),
    (0.0, "Command line: BOOT_IMAGE=/boot/vmlinuz-6.1.0-18-amd64 root=UUID=1b2c ro quiet"),
    (700.0, "BUG: unable to handle page fault for address: ffffc90000a3f000"),
    (700.0, "#PF: supervisor write access in kernel mode"),
    (700.0, "#PF: error_code(0x0002) - not-present page"),
    (700.0, "Oops: 0002 [#1] PREEMPT SMP NOPTI"),
    (700.0, f"CPU: 0 PID: 77 Comm: kworker/0:1 {TAINT}"),
    (700.0, "RIP: 0010:memcpy_orig+0x31/0x140"),
    (700.0, "Call Trace:"),
    (700.0, " <TASK>"),
    (700.0, " nv_dma_map_pages+0x11c/0x2a0 [nvidia]"),
    (700.0, " process_one_work+0x1c7/0x380"),
    (700.0, " </TASK>"),
    (700.0, "CR2: ffffc90000a3f000"),
    (700.0, "---[ end trace 0000000000000000 ]---"),
]


def test_the_main_problem_of_a_crash_is_of_its_boot(tmp_path: Path) -> None:
    path = tmp_path / "kern.log"
    path.write_text("".join(f"[{t:12.6f}] {body}\n" for t, body in (*BOOT1, *BOOT2)))
    findings = analyse_logs([str(path)], live=False).incident.findings
    boots = {f.title: f.fact(BOOT_FACT) for f in findings}
    assert boots == {
        "WARNING in intel_runtime_pm_driver_release": "the boot from line 1 (its banner: Linux version 6.1.0-18-amd64)",
        "BUG: unable to handle kernel paging request in nv_dma_map_pages": f"the boot from line {len(BOOT1) + 1} "
        "(its banner: Linux version 6.1.0-18-amd64)",
    }
    said = plain_summary(findings, "web-03")
    assert "WARNING" not in said, said
    # The boot after the report's title, then the hypothesis that names it (the ranking's first).
    assert (
        f"in nv_dma_map_pages. In the boot from line {len(BOOT1) + 1} (its banner: Linux version 6.1.0-18-amd64) of "
        "the log. Hypothesis 1 of the ranking" in said
    ), said


def test_a_log_of_one_boot_names_none(tmp_path: Path) -> None:
    path = tmp_path / "kern.log"
    path.write_text("".join(f"[{t:12.6f}] {body}\n" for t, body in BOOT1))
    (finding,) = analyse_logs([str(path)], live=False).incident.findings
    assert finding.fact(BOOT_FACT) is None
