#!/usr/bin/env python3
"""Write expected.json for every vmcore fixture case, and MANIFEST.json.

Called by build.sh.  The ground truth comes from the sources and the build
products, never from reading the dumps:

* culprit function, file and line: the ``KF_FAULT <bug>`` marker comment in
  kf_buggy/kf_buggy.c, the enclosing function found in the source text;
* kernel crash sites (panic()/BUG() callers): the statement found by a fixed
  pattern in the kernel source tree, the enclosing function from the source;
* struct member offset: gdb ``offsetof`` on kf_buggy.ko's DWARF;
* faulting instruction and the register that held NULL: objdump -dl of
  kf_buggy.ko, the instruction of the marker line that addresses
  ``<offset>(%reg)``;
* kernel release and build id: the kernel build tree and vmlinux notes;
* task, CPU, panic message: what the case's code path does (the init pins
  the trigger to CPU 1 with taskset; kthreads are named in kf_buggy.c);
* the kernel's version-dependent layout (``kernel_facts`` in MANIFEST.json: slab
  flag bits, track order, stack depot names, lock owner words, list checker
  names, ...): the kernel's headers and sources and its .config, and for the
  enumerators of v6.9+ gdb on the built vmlinux.

One kernel per run (``--kernel``): 6.1's payload is this directory, the other
kernels' ``kernels/<version>/``.

Only the Python standard library is used (runs with the system python3).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

MODULE_SOURCE_REL = "vmcore_fixtures/kf_buggy/kf_buggy.c"

# Kernel-side sites: (source file, pattern identifying the statement).
KERNEL_SITES: dict[str, tuple[str, str]] = {
    "page_fault_oops": ("arch/x86/mm/fault.c", 'pr_alert("BUG: kernel NULL pointer dereference'),
    "panic_on_warn": ("kernel/panic.c", 'panic("%s: panic_on_warn set'),
    "hung_task": ("kernel/hung_task.c", 'panic("hung_task: blocked tasks")'),
    "soft_lockup": ("kernel/watchdog.c", 'panic("softlockup: hung tasks")'),
    "list_del_poison1": ("lib/list_debug.c", "CHECK_DATA_CORRUPTION(next == LIST_POISON1"),
    "sysrq_crash": ("drivers/tty/sysrq.c", 'panic("sysrq triggered crash'),
    "panic_on_oom": ("mm/oom_kill.c", 'panic("Out of memory: %s panic_on_oom is enabled'),
    "gpf": ("arch/x86/kernel/traps.c", "die_addr(desc, regs, error_code, gp_addr);"),
    "double_free": ("mm/slub.c", "BUG_ON(object == fp); /* naive detection of double free or corruption */"),
    "list_add_prev_next": ("lib/list_debug.c", "CHECK_DATA_CORRUPTION(prev->next != next,"),
}

# stack_functions name the module's functions and the debugfs proxy that calls them through a function
# pointer (full_proxy_read/write): neither can be inlined nor tail-called away, whatever the compiler
# does, unlike vfs_read(), which tail-calls f_op->read() on a configuration without fsnotify (6.12).
FUNC_DEF = re.compile(r"^(?:[A-Za-z_][\w\s\*]*?[\s\*])?(\w+)\s*\(")


def run(cmd: list[str]) -> str:
    return subprocess.run(cmd, check=True, capture_output=True, text=True).stdout


def find_line(path: Path, pattern: str) -> int:
    hits = [i for i, text in enumerate(path.read_text().splitlines(), 1) if pattern in text]
    if len(hits) != 1:
        sys.exit(f"{path}: pattern {pattern!r} found {len(hits)} times, expected once")
    return hits[0]


def enclosing_function(path: Path, line: int) -> str:
    """The function whose definition (kernel style, name at column 0) precedes line."""
    lines = path.read_text().splitlines()
    for text in reversed(lines[: line - 1]):
        m = FUNC_DEF.match(text)
        if m and not text.startswith(("static const", "#")) and "=" not in text and not text.endswith(";"):
            return m.group(1)
    sys.exit(f"{path}:{line}: no enclosing function")


def site(ksrc: Path, key: str) -> dict[str, Any]:
    rel, pattern = KERNEL_SITES[key]
    line = find_line(ksrc / rel, pattern)
    return {"function": enclosing_function(ksrc / rel, line), "file": rel, "line": line}


def oops_header(ksrc: Path, headline: str) -> str:
    """An oops headline as __die_header() prints it: "Oops: " before it since v6.10 (dumpstack.c's format)."""
    text = (ksrc / "arch/x86/kernel/dumpstack.c").read_text()
    return f"Oops: {headline}" if '"Oops: %s: %04lx [#%d]' in text else headline


def gp_hint_displacement(ksrc: Path, displacement: int) -> int:
    """The part of a memory operand's displacement the GPF headline's "non-canonical address" includes.

    get_kernel_gp_address() decodes the whole instruction since v5.12 (insn_decode_kernel()); 5.10
    decodes only ModRM and SIB, so the address it prints lacks the displacement.
    """
    traps = (ksrc / "arch/x86/kernel/traps.c").read_text()
    return displacement if "insn_decode_kernel(&insn, insn_buf)" in traps else 0


def kfree_path(ksrc: Path) -> str:
    """The function between kfree() and the slab free path: __kmem_cache_free (6.1's slab_common.c) or kfree."""
    common = (ksrc / "mm/slab_common.c").read_text()
    return "__kmem_cache_free" if "__kmem_cache_free(s, (void *)object, _RET_IP_)" in common else "kfree"


def member_offset(ko: Path, struct: str, member: str) -> int:
    out = run(["gdb", "-batch", "-nx", "-ex", f"print (long)&((struct {struct} *)0)->{member}", str(ko)])
    m = re.search(r"=\s*(\d+)", out)
    if not m:
        sys.exit(f"gdb could not compute offsetof(struct {struct}, {member}): {out!r}")
    return int(m.group(1))


def faulting_instruction(ko: Path, function: str, line: int, offset: int) -> dict[str, Any]:
    """The instruction of source line `line` that loads from `offset`(%reg)."""
    out = run(["objdump", "-dl", "--no-show-raw-insn", f"--disassemble={function}", str(ko)])
    start: int | None = None
    current_line: int | None = None
    for text in out.splitlines():
        m = re.match(rf"^([0-9a-f]+) <{re.escape(function)}>:", text)
        if m:
            start = int(m.group(1), 16)
            continue
        m = re.match(r"^\S*kf_buggy\.c:(\d+)", text)
        if m:
            current_line = int(m.group(1))
            continue
        m = re.match(r"^\s*([0-9a-f]+):\s+(.*\S)\s*$", text)
        if m and start is not None and current_line == line:
            insn = m.group(2)
            reg = re.search(rf"\b0x{offset:x}\(%(\w+)\)", insn)
            if reg:
                addr = int(m.group(1), 16)
                return {
                    "instruction": re.sub(r"\s+", " ", insn),
                    "function_offset": addr - start,
                    "register": reg.group(1),
                }
    sys.exit(f"no instruction addressing 0x{offset:x}(%reg) at kf_buggy.c:{line} in {function}")


def kernel_release(ksrc: Path) -> str:
    return (ksrc / "include/config/kernel.release").read_text().strip()


def build_id(elf: Path) -> str:
    m = re.search(r"Build ID:\s*([0-9a-f]+)", run(["readelf", "-n", str(elf)]))
    if not m:
        sys.exit(f"{elf}: no GNU build id")
    return m.group(1)


def stall_title(source: Path, comm: str) -> str:
    """A soft lockup's syzkaller title: syzbot's stall rule (linuxStallFrameExtractor) names the frame above the
    dispatch point (here ``kthread``), the thread function of the kthread ``comm``, not the frame the watchdog
    interrupted (the polling function the culprit fields name)."""
    m = re.search(rf"kthread_(?:create|run)\((\w+), NULL, \"{re.escape(comm)}\"\)", source.read_text())
    if m is None:
        raise SystemExit(f"{source}: no kthread_create/kthread_run of {comm!r}")
    return f"BUG: soft lockup in {m.group(1)}"


def marker(source: Path, bug: str) -> dict[str, Any]:
    line = find_line(source, f"/* KF_FAULT {bug} */")
    return {
        "function": enclosing_function(source, line),
        "file": MODULE_SOURCE_REL,
        "line": line,
    }


def struct_size(ko: Path, struct: str) -> int:
    out = run(["gdb", "-batch", "-nx", "-ex", f"print (long)sizeof(struct {struct})", str(ko)])
    m = re.search(r"=\s*(\d+)", out)
    if not m:
        sys.exit(f"gdb could not compute sizeof(struct {struct}): {out!r}")
    return int(m.group(1))


def kmalloc_cache(size: int) -> str:
    """The kmalloc cache a kzalloc(size) lands in (x86-64 SLUB: 8, 16, 32, 64, 96, 128, 192, 256, ...)."""
    for step in (8, 16, 32, 64, 96, 128, 192, 256, 512, 1024, 2048, 4096, 8192):
        if size <= step:
            return f"kmalloc-{step}" if step < 1024 else f"kmalloc-{step // 1024}k"
    sys.exit(f"no kmalloc cache for {size} bytes")


def condition_on(source: Path, line: int) -> dict[str, str]:
    """The assertion macro and its condition on a marker line (``BUG_ON(cond)``, ``WARN_ON(cond)``)."""
    text = source.read_text().splitlines()[line - 1]
    m = re.search(r"\b(BUG_ON|WARN_ON)\((.*)\)\)?\s*;?\s*(?:/\*.*)?$", text)
    loop = re.search(r"while \((.*)\)\s*$", text)
    if m:
        cond = m.group(2)
        if m.group(1) == "WARN_ON" and cond.endswith(")"):  # if (WARN_ON(cond))
            cond = cond[: cond.rfind(")")] if cond.count("(") < cond.count(")") else cond
        return {"macro": m.group(1), "condition": cond}
    if loop:
        return {"condition": loop.group(1)}
    sys.exit(f"{source}:{line}: no BUG_ON/WARN_ON/while condition")


def why_table(fixtures: Path, ko: Path) -> dict[str, dict[str, Any]]:
    """The decisive values of each case, from the source and the module's DWARF (never from a dump).

    Operand values follow from the code path the trigger takes: kf_setup_buffer()
    sets refcount 1 and each buffer_put write drops one, so the second BUG_ON sees 0;
    kf_state starts KF_IDLE (0) and nothing sets it before state_stop; a session is
    list_del()'d twice, so its node holds LIST_POISON1/2 and stays allocated (never freed).
    """
    src = fixtures / "kf_buggy" / "kf_buggy.c"
    bug_on = condition_on(src, marker(src, "bug_on")["line"])
    warn_on = condition_on(src, marker(src, "warn_on")["line"])
    spin_line = marker(src, "soft_lockup")["line"] - 1  # the while () above the cpu_relax() marker
    session = struct_size(ko, "kf_session")
    return {
        "02-bug-on": {
            "class": "bug_condition", **bug_on, "operands": {"buf->refcount": 0}, "result": True,
        },
        "03-warn-on": {
            "class": "bug_condition", **warn_on, "operands": {"*state": 0, "KF_RUNNING": 1}, "result": True,
        },
        "04-hung-task": {"class": "lock_wait", "cycle": False},
        "05-soft-lockup": {
            "class": "busy_wait", "function": marker(src, "soft_lockup")["function"],
            **condition_on(src, spin_line),
        },
        "06-list-corrupt": {
            "class": "list_corruption", "struct": "struct kf_session", "member": "node",
            "member_offset": member_offset(ko, "kf_session", "node"), "cache": kmalloc_cache(session),
            "allocated": True, "next": "0xdead000000000100", "prev": "0xdead000000000122",
        },
        "09-oom": {"class": "oom", "top_user": "kf_memhog"},
        **new_whys(src, ko),
    }  # fmt: skip


def new_whys(src: Path, ko: Path) -> dict[str, dict[str, Any]]:
    """The decisive values of the cases 10-14 (the code paths are described in kf_buggy.c).

    10: kmem_cache_free() with slub_debug=FZPU poisons the whole object with 0x6b, so
    conn->peer reads 0x6b6b6b6b6b6b6b6b and peer->mtu faults at that plus offsetof(mtu).
    12: the second kfree() finds the object at the head of the freelist.  13: the 25 bytes
    of "i2c-1-temperature-sensor\\0" fill name[16] and the next 8 bytes (node.next).
    14: the poller sets the qspinlock pending bit (0x100) and spins on the locked byte (1).
    """
    uaf_free = find_line(src, "/* KF_FREE use_after_free */")
    df_free = find_line(src, "/* KF_FREE double_free */")
    peer_off = member_offset(ko, "kf_conn", "peer")
    mtu_off = member_offset(ko, "kf_peer", "mtu")
    poison = 0x6B6B6B6B6B6B6B6B
    overflow = b"i2c-1-temperature-sensor"
    name_size = member_offset(ko, "kf_client", "node")
    bad = int.from_bytes(overflow[name_size : name_size + 8], "little")
    config, stats = marker(src, "abba_config"), marker(src, "abba_stats")
    spin = marker(src, "spin_deadlock")
    return {
        "10-use-after-free": {
            "class": "use_after_free", "cache": "kf_conn", "struct": "struct kf_conn",
            "object_state": "free", "member": "peer", "member_offset": peer_off,
            "value": f"{poison:#x}", "fault_address": f"{poison + mtu_off:#x}",
            "free_function": enclosing_function(src, uaf_free), "free_line": uaf_free,
            "alloc_function": "kf_conn_open", "stale_pointer": "kf_active_conn",
            "title": f"BUG: use-after-free Read in {marker(src, 'use_after_free')['function']}",
        },
        "11-abba-deadlock": {
            "class": "lock_cycle", "cycle": True,
            "tasks": {
                "kf_config": {"holds": "kf_config_lock", "wants": "kf_stats_lock",
                              "function": config["function"], "line": config["line"]},
                "kf_stats": {"holds": "kf_stats_lock", "wants": "kf_config_lock",
                             "function": stats["function"], "line": stats["line"]},
            },
        },
        "12-double-free": {
            "class": "double_free", "cache": kmalloc_cache(struct_size(ko, "kf_msg")), "object_state": "free",
            "function": marker(src, "double_free")["function"], "first_free_line": df_free,
            "second_free_line": marker(src, "double_free")["line"], "free_stack_recorded": False,
            "title": f"BUG: double free in {marker(src, 'double_free')['function']}",
        },
        "13-list-overflow": {
            "class": "list_corruption", "struct": "struct kf_client", "member": "node",
            "member_offset": name_size, "neighbour": "name", "neighbour_type": f"char [{name_size}]",
            "bad_pointer": f"{bad:#x}", "text": overflow[name_size : name_size + 8].decode(),
            "cache": kmalloc_cache(struct_size(ko, "kf_client")), "allocated": True,
            "overflow_function": enclosing_function(src, find_line(src, "/* KF_OVERFLOW list_overflow */")),
        },
        "14-spin-deadlock": {
            "class": "spinlock_deadlock", "function": spin["function"], "lock": "kf_hw_lock",
            "lock_word": "0x101", "owner": None, "leaked_by": enclosing_function(src, find_line(src, "KF_LEAK")),
            "title": stall_title(src, "kf_hw_poll"),
        },
    }  # fmt: skip


def add_why(fixtures: Path, payload: Path, ko: Path) -> None:
    """Add the ``why`` ground truth to the cases' expected.json and refresh their MANIFEST entries."""
    manifest_path = payload / "MANIFEST.json"
    manifest = json.loads(manifest_path.read_text())
    by_path = {f["path"]: f for f in manifest["files"]}
    for name, why in why_table(fixtures, ko).items():
        path = payload / "cases" / name / "expected.json"
        if not path.exists():
            continue
        expected = json.loads(path.read_text())
        expected["why"] = why
        path.write_text(json.dumps(expected, indent=2) + "\n")
        entry = by_path[str(path.relative_to(payload))]
        entry["size"], entry["sha256"] = path.stat().st_size, sha256(path)
    manifest_path.write_text(json.dumps(manifest, indent=2) + "\n")


def culprit(m: dict[str, Any]) -> dict[str, Any]:
    """The ground-truth fields of the buggy code to fix, from a marker."""
    return {"culprit_function": m["function"], "source_file": m["file"], "source_line": m["line"]}


def case_table(fixtures: Path, ksrc: Path, ko: Path) -> dict[str, dict[str, Any]]:
    src = fixtures / "kf_buggy" / "kf_buggy.c"
    null = marker(src, "null_member")
    off = member_offset(ko, "kf_sensor", "ops")
    insn = faulting_instruction(ko, null["function"], null["line"], off)
    bug_on = marker(src, "bug_on")
    warn_on = marker(src, "warn_on")
    hung = marker(src, "hung_task")
    spin = marker(src, "soft_lockup")
    lst = marker(src, "list_corrupt")
    leak = marker(src, "slab_leak")
    holder_line = find_line(src, "/* KF_HOLDER */")
    oops_site = site(ksrc, "page_fault_oops")
    warn_site = site(ksrc, "panic_on_warn")
    hung_site = site(ksrc, "hung_task")
    lockup_site = site(ksrc, "soft_lockup")
    list_site = site(ksrc, "list_del_poison1")
    sysrq_site = site(ksrc, "sysrq_crash")
    oom_site = site(ksrc, "panic_on_oom")

    return {
        "01-null-member": {
            "type": "null_pointer_dereference",
            "title": f"BUG: unable to handle kernel NULL pointer dereference in {null['function']}",
            "description": "cat /sys/kernel/debug/kf_buggy/in_voltage3_raw (pinned to CPU 1): kf_raw_read() -> "
            "kf_null_member_read() reads dev->sensor->ops->read_raw while dev->sensor is NULL; "
            "ops is at a non-zero offset in struct kf_sensor, so the fault address is that offset",
            "crashing_function": null["function"],
            **culprit(null),
            "in_module": "kf_buggy",
            "task_comm": "cat",
            "cpu": 1,
            "stack_top": null["function"],
            "stack_functions": [null["function"], "kf_raw_read", "full_proxy_read"],
            "fault_address": off,
            "null_expression": "dev->sensor",
            "access_expression": "dev->sensor->ops",
            "null_register": insn["register"],
            "faulting_instruction": insn["instruction"],
            "faulting_function_offset": insn["function_offset"],
            "struct_type": "struct kf_sensor",
            "member": "ops",
            "member_offset": off,
            "panic_message": f"BUG: kernel NULL pointer dereference, address: {off:016x}",
            "log_key_lines": [
                f"BUG: kernel NULL pointer dereference, address: {off:016x}",
                f"RIP: 0010:{null['function']}",
            ],
            "kernel_site": oops_site,
        },
        "02-bug-on": {
            "type": "bug_on",
            "title": f"kernel BUG in {bug_on['function']}",
            "description": "two writes to debugfs kf_buggy/buffer_put (shell pinned to CPU 1) drop the single "
            "reference twice; the second kf_buffer_put() hits BUG_ON(refcount <= 0)",
            "crashing_function": bug_on["function"],
            **culprit(bug_on),
            "in_module": "kf_buggy",
            "task_comm": "sh",
            "cpu": 1,
            "stack_top": bug_on["function"],
            "stack_functions": [bug_on["function"], "kf_buffer_put_write", "full_proxy_write"],
            "panic_message": f"kernel BUG at kf_buggy/kf_buggy.c:{bug_on['line']}!",
            "log_key_lines": [
                f"kernel BUG at kf_buggy/kf_buggy.c:{bug_on['line']}!",
                f"RIP: 0010:{bug_on['function']}",
            ],
        },
        "03-warn-on": {
            "type": "warning_panic_on_warn",
            "title": f"WARNING in {warn_on['function']}",
            "description": "a write to debugfs kf_buggy/state_stop (shell pinned to CPU 1) calls kf_state_stop() "
            "in the IDLE state: WARN_ON(), and panic_on_warn=1",
            "crashing_function": warn_site["function"],
            **culprit(warn_on),
            "in_module": "kf_buggy",
            "task_comm": "sh",
            "cpu": 1,
            "stack_functions": ["panic", warn_site["function"], "__warn", warn_on["function"], "kf_state_stop_write"],
            "panic_message": "Kernel panic - not syncing: kernel: panic_on_warn set ...",
            "log_key_lines": [
                "WARNING: CPU: 1 PID:",
                f"at kf_buggy/kf_buggy.c:{warn_on['line']} {warn_on['function']}+",
                "Kernel panic - not syncing: kernel: panic_on_warn set ...",
            ],
            "kernel_site": warn_site,
        },
        "04-hung-task": {
            "type": "hung_task",
            "title": f"INFO: task hung in {hung['function']}",
            "description": "kthread kf_holder takes kf_dev_lock and sleeps forever; kthread kf_waiter "
            "blocks in mutex_lock() (D state); khungtaskd panics (hung_task_panic=1, timeout 5 s)",
            "crashing_function": hung_site["function"],
            **culprit(hung),
            "in_module": "kf_buggy",
            "task_comm": "khungtaskd",
            "cpu": None,
            "stack_functions": ["panic", hung_site["function"]],
            "panic_message": "Kernel panic - not syncing: hung_task: blocked tasks",
            "log_key_lines": [
                "INFO: task kf_waiter:",
                "blocked for more than 5 seconds.",
                "Kernel panic - not syncing: hung_task: blocked tasks",
            ],
            "hung_task_timeout_secs": 5,
            "lock": {
                "name": "kf_dev_lock",
                "type": "struct mutex",
                "owner_comm": "kf_holder",
                "owner_function": "kf_holder_fn",
                "owner_source_line": holder_line,
                "owner_state": "S",
                "waiter_comm": "kf_waiter",
                "waiter_function": hung["function"],
                "waiter_source_line": hung["line"],
                "waiter_state": "D",
                "waiter_stack_functions": ["schedule", "__mutex_lock", hung["function"], "kf_waiter_fn", "kthread"],
            },
            "kernel_site": hung_site,
        },
        "05-soft-lockup": {
            "type": "soft_lockup",
            "title": stall_title(src, "kf_spinner"),
            "description": "kthread kf_spinner, bound to CPU 1, polls a bit that is never set with "
            "preemption disabled; softlockup_panic=1 watchdog_thresh=3 (threshold 6 s)",
            "crashing_function": lockup_site["function"],
            **culprit(spin),
            "in_module": "kf_buggy",
            "task_comm": "kf_spinner",
            "cpu": 1,
            "stack_functions": ["panic", lockup_site["function"]],
            "panic_message": "Kernel panic - not syncing: softlockup: hung tasks",
            "log_key_lines": [
                "watchdog: BUG: soft lockup - CPU#1 stuck for",
                "[kf_spinner:",
                f"RIP: 0010:{spin['function']}",
                "Kernel panic - not syncing: softlockup: hung tasks",
            ],
            "watchdog_thresh": 3,
            "kernel_site": lockup_site,
        },
        "06-list-corrupt": {
            "type": "list_corruption",
            "title": f"BUG: corrupted list in {lst['function']}",
            "description": "two writes to debugfs kf_buggy/session_close (shell pinned to CPU 1) close the same "
            "session twice: the second list_del() finds next == LIST_POISON1; "
            "CONFIG_DEBUG_LIST + CONFIG_BUG_ON_DATA_CORRUPTION turn it into BUG()",
            "crashing_function": list_site["function"],
            **culprit(lst),
            "in_module": "kf_buggy",
            "task_comm": "sh",
            "cpu": 1,
            "stack_top": list_site["function"],
            "stack_functions": [list_site["function"], lst["function"], "kf_session_close_write", "full_proxy_write"],
            "panic_message": "list_del corruption, ",
            "log_key_lines": [
                "->next is LIST_POISON1 (dead000000000100)",
                "kernel BUG at lib/list_debug.c:",
                f"RIP: 0010:{list_site['function']}",
            ],
            "kernel_site": list_site,
        },
        "07-sysrq-c": {
            "type": "sysrq_crash",
            "title": "Kernel panic: sysrq triggered crash",
            "description": "echo c > /proc/sysrq-trigger from a shell pinned to CPU 1",
            "crashing_function": sysrq_site["function"],
            "culprit_function": None,
            "source_file": sysrq_site["file"],
            "source_line": sysrq_site["line"],
            "in_module": None,
            "task_comm": "sh",
            "cpu": 1,
            "stack_functions": ["panic", sysrq_site["function"], "write_sysrq_trigger"],
            "panic_message": "Kernel panic - not syncing: sysrq triggered crash",
            "log_key_lines": ["sysrq: Trigger a crash", "Kernel panic - not syncing: sysrq triggered crash"],
            "kernel_site": sysrq_site,
        },
        "08-slab-leak": {
            "type": "slab_leak",
            "title": f"memory leak in {leak['function']}",
            "description": "kthread kf_leaker allocates struct kf_request objects from its own cache "
            "kf_leak_obj (slab_nomerge) about 20 times a second and never frees them; a shell "
            "samples /proc/slabinfo and /proc/meminfo every second for 90 samples, then sysrq-c",
            "crashing_function": sysrq_site["function"],
            **culprit(leak),
            "in_module": "kf_buggy",
            "task_comm": "sh",
            "cpu": 1,
            "stack_functions": ["panic", sysrq_site["function"], "write_sysrq_trigger"],
            "panic_message": "Kernel panic - not syncing: sysrq triggered crash",
            "log_key_lines": ["sysrq: Trigger a crash", "Kernel panic - not syncing: sysrq triggered crash"],
            "leak": {
                "cache": "kf_leak_obj",
                "object_size": 512,
                "struct_type": "struct kf_request",
                "magic": "0x6b66726571756573",
                "allocating_function": leak["function"],
                "leaker_comm": "kf_leaker",
                "nominal_rate_per_sec": 20,
                "counter_symbol": "kf_leak_count",
                "samples": 90,
                "sample_interval_s": 1,
            },
            "kernel_site": sysrq_site,
        },
        "09-oom": {
            "type": "oom_panic",
            "title": "Out of memory: system-wide panic_on_oom is enabled (kf_memhog)",
            "description": "static user-space program kf_memhog (pinned to CPU 1) allocates and touches "
            "1 MiB chunks; vm.panic_on_oom=1 panics at the first OOM",
            "crashing_function": oom_site["function"],
            "culprit_function": None,
            "source_file": "vmcore_fixtures/initramfs/kf_memhog.c",
            "source_line": None,
            "in_module": None,
            "task_comm": "kf_memhog",
            "cpu": 1,
            "stack_functions": ["panic", "out_of_memory"],
            "panic_message": "Kernel panic - not syncing: Out of memory: system-wide panic_on_oom is enabled",
            "log_key_lines": [
                "kf_memhog invoked oom-killer:",
                "Kernel panic - not syncing: Out of memory: system-wide panic_on_oom is enabled",
            ],
            "oom": {"process": "kf_memhog", "constraint": "CONSTRAINT_NONE", "panic_on_oom": 1},
            "kernel_site": oom_site,
        },
        **new_cases(src, ksrc, ko),
    }


def new_cases(src: Path, ksrc: Path, ko: Path) -> dict[str, dict[str, Any]]:
    """Cases 10-14: use-after-free, AB-BA deadlock, double free, list overflow, spinlock deadlock."""
    uaf = marker(src, "use_after_free")
    config = marker(src, "abba_config")
    dfree = marker(src, "double_free")
    ovf = marker(src, "list_overflow")
    overflow_line = find_line(src, "/* KF_OVERFLOW list_overflow */")
    spin = marker(src, "spin_deadlock")
    gpf_site = site(ksrc, "gpf")
    df_site = site(ksrc, "double_free")
    list_site = site(ksrc, "list_add_prev_next")
    hung_site = site(ksrc, "hung_task")
    lockup_site = site(ksrc, "soft_lockup")
    poison_addr = 0x6B6B6B6B6B6B6B6B + gp_hint_displacement(ksrc, member_offset(ko, "kf_peer", "mtu"))

    return {
        "10-use-after-free": {
            "type": "use_after_free",
            "title": f"BUG: use-after-free Read in {uaf['function']}",
            "description": "slub_debug=FZPU,kf_conn; writes to debugfs kf_buggy/conn_open, conn_close, conn_send "
            "(shell pinned to CPU 1): kf_conn_close() frees the connection but kf_active_conn keeps "
            "pointing at it; kf_conn_send() reads conn->peer (0x6b poison) and faults on peer->mtu",
            "crashing_function": uaf["function"],
            **culprit(uaf),
            "in_module": "kf_buggy",
            "task_comm": "sh",
            "cpu": 1,
            "stack_top": uaf["function"],
            "stack_functions": [uaf["function"], "kf_conn_send_write", "full_proxy_write"],
            # the whole oops header line, as the kernel printed it and crash's PANIC shows it
            "panic_message": oops_header(
                ksrc, f"general protection fault, probably for non-canonical address {poison_addr:#x}: 0000 [#1] SMP"
            ),
            "log_key_lines": [
                f"general protection fault, probably for non-canonical address {poison_addr:#x}",
                f"RIP: 0010:{uaf['function']}",
            ],
            "kernel_site": gpf_site,
        },
        "11-abba-deadlock": {
            "type": "hung_task",
            "title": f"INFO: task hung in {config['function']}",
            "description": "kthread kf_config takes kf_config_lock then wants kf_stats_lock; kthread kf_stats "
            "takes kf_stats_lock then wants kf_config_lock (AB-BA); both block in mutex_lock() (D); "
            "khungtaskd panics (hung_task_panic=1, timeout 5 s)",
            "crashing_function": hung_site["function"],
            **culprit(config),
            "in_module": "kf_buggy",
            "task_comm": "khungtaskd",
            "cpu": None,
            "stack_functions": ["panic", hung_site["function"]],
            "panic_message": "Kernel panic - not syncing: hung_task: blocked tasks",
            "log_key_lines": [
                "blocked for more than 5 seconds.",
                "Kernel panic - not syncing: hung_task: blocked tasks",
            ],
            "hung_task_timeout_secs": 5,
            "kernel_site": hung_site,
        },
        "12-double-free": {
            "type": "double_free",
            "title": f"BUG: double free in {dfree['function']}",
            "description": "a write to debugfs kf_buggy/msg_submit (shell pinned to CPU 1): kf_msg_submit()'s "
            "error path kfree()s the message and the common exit kfree()s it again; "
            "CONFIG_SLAB_FREELIST_HARDENED's BUG_ON(object == fp) in set_freepointer() fires",
            "crashing_function": df_site["function"],
            **culprit(dfree),
            "in_module": "kf_buggy",
            "task_comm": "sh",
            "cpu": 1,
            "stack_functions": [df_site["function"], kfree_path(ksrc), dfree["function"], "kf_msg_submit_write"],
            "panic_message": f"kernel BUG at mm/slub.c:{df_site['line']}!",
            "log_key_lines": [f"kernel BUG at mm/slub.c:{df_site['line']}!", f"RIP: 0010:{df_site['function']}"],
            "kernel_site": df_site,
        },
        "13-list-overflow": {
            "type": "list_corruption",
            "title": f"BUG: corrupted list in {ovf['function']}",
            "description": 'writes to debugfs kf_buggy/client_rename ("i2c-1-temperature-sensor") and client_add '
            "(shell pinned to CPU 1): kf_client_rename() strcpy()s 25 bytes into char name[16], which "
            "overwrites the next list_head; the next list_add_tail() finds prev->next is text",
            "crashing_function": list_site["function"],
            **culprit(ovf),
            "in_module": "kf_buggy",
            "task_comm": "sh",
            "cpu": 1,
            "stack_top": list_site["function"],
            "stack_functions": [list_site["function"], "kf_client_register", "kf_client_add_write", "full_proxy_write"],
            "overflow_function": enclosing_function(src, overflow_line),
            "overflow_line": overflow_line,
            "panic_message": "list_add corruption. prev->next should be next",
            "log_key_lines": [
                "list_add corruption. prev->next should be next",
                "but was 726f736e65732d65",
                "kernel BUG at lib/list_debug.c:",
            ],
            "kernel_site": list_site,
        },
        "14-spin-deadlock": {
            "type": "soft_lockup",
            "title": stall_title(src, "kf_hw_poll"),
            "description": "insmod bug=spin_deadlock: kf_hw_configure()'s error path returns with kf_hw_lock held; "
            "kthread kf_hw_poll, bound to CPU 1, spins in spin_lock(&kf_hw_lock); "
            "softlockup_panic=1 watchdog_thresh=3",
            "crashing_function": lockup_site["function"],
            **culprit(spin),
            "in_module": "kf_buggy",
            "task_comm": "kf_hw_poll",
            "cpu": 1,
            "stack_functions": ["panic", lockup_site["function"]],
            "panic_message": "Kernel panic - not syncing: softlockup: hung tasks",
            "log_key_lines": [
                "watchdog: BUG: soft lockup - CPU#1 stuck for",
                "[kf_hw_poll:",
                "Kernel panic - not syncing: softlockup: hung tasks",
            ],
            "watchdog_thresh": 3,
            "kernel_site": lockup_site,
        },
    }


def sha256(path: Path) -> str:
    h = hashlib.sha256()
    with path.open("rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def payload_dir(fixtures: Path, kernel: str) -> Path:
    """Where a kernel's payload lives: this directory for 6.1 (the first fixture kernel), else kernels/<version>."""
    return fixtures if kernel == "6.1" else fixtures / "kernels" / kernel


def payload_files(payload: Path) -> list[Path]:
    files = [payload / "vmlinux.xz", payload / "kf_buggy.ko"]
    for top in ("cases", "sysroots"):
        if (payload / top).is_dir():
            files += [p for p in (payload / top).rglob("*") if p.is_file()]
    return sorted(files)


def guest(work: Path, name: str) -> dict[str, Any]:
    """The QEMU guest a case ran in (the accelerator build.sh used is recorded beside the run)."""
    accel_file = work / "runs" / name / "accel"
    accel = accel_file.read_text().strip() if accel_file.exists() else "tcg"
    return {"machine": f"q35,accel={accel}", "cpu": "qemu64", "smp": 2}


def write_expected(fixtures: Path, work: Path, kernel: str) -> None:
    ksrc = work / f"linux-source-{kernel}"
    ko = work / "kf_buggy.ko"
    payload = payload_dir(fixtures, kernel)
    table = case_table(fixtures, ksrc, ko)
    whys = why_table(fixtures, ko)
    common = {
        "kernel_release": kernel_release(ksrc),
        "vmlinux_build_id": build_id(ksrc / "vmlinux"),
        "module_build_id": build_id(ko),
        "pid": None,
    }
    for name, fields in table.items():
        case_dir = payload / "cases" / name
        if not case_dir.is_dir():
            continue
        cmdline_file = work / "runs" / name / "cmdline"
        expected = {"name": name, **common, "guest": guest(work, name), **fields}
        if name in whys:
            expected["why"] = whys[name]
        if cmdline_file.exists():
            expected["kernel_cmdline"] = cmdline_file.read_text().strip()
        (case_dir / "expected.json").write_text(json.dumps(expected, indent=2) + "\n")
        print(f"wrote {case_dir / 'expected.json'}", file=sys.stderr)


# ---------------------------------------------------------------- the kernel's version-dependent layout


def _gdb_int(vmlinux: Path, expression: str) -> int | None:
    out = run(["gdb", "-batch", "-nx", "-ex", f"print (long)({expression})", str(vmlinux)])
    m = re.search(r"=\s*(-?\d+)", out)
    return int(m.group(1)) if m else None


def _config(ksrc: Path) -> dict[str, str]:
    out = {}
    for line in (ksrc / ".config").read_text().splitlines():
        if line.startswith("CONFIG_") and "=" in line:
            key, value = line.split("=", 1)
            out[key] = value
    return out


def _slab_flag(ksrc: Path, vmlinux: Path | None, name: str) -> int:
    """A SLAB_* flag's value: the #define of include/linux/slab.h, or 1 << its enumerator (v6.9+) per gdb."""
    header = (ksrc / "include/linux/slab.h").read_text()
    m = re.search(rf"#define {name}\s+\(\(slab_flags_t __force\)(0x[0-9a-fA-F]+)U?\)", header)
    if m:
        return int(m.group(1), 16)
    if f"__SLAB_FLAG_BIT(_{name})" not in header or vmlinux is None:
        sys.exit(f"{name}: neither a #define nor an enum _slab_flag_bits member in slab.h")
    bit = _gdb_int(vmlinux, f"_{name}")
    if bit is None:
        sys.exit(f"gdb could not read the enumerator _{name} from {vmlinux}")
    return 1 << bit


def _defines(path: Path, *names: str) -> list[str]:
    text = path.read_text()
    return [n for n in names if re.search(rf"\b{re.escape(n)}\b", text)]


def kernel_facts(ksrc: Path, vmlinux: Path | None) -> dict[str, Any]:
    """The values each version-dependent read of kforensic must find on this kernel, from its sources."""
    slub = (ksrc / "mm/slub.c").read_text()
    track = re.search(r"enum track_item \{ (\w+), (\w+) \};", slub)
    depot_c = ksrc / "lib/stackdepot.c"
    depot_h = ksrc / "include/linux/stackdepot.h"
    depot_text = depot_c.read_text() + depot_h.read_text()
    mutex_header = ksrc / "include/linux/mutex_types.h"
    mutex = (mutex_header if mutex_header.exists() else ksrc / "include/linux/mutex.h").read_text()
    list_debug = (ksrc / "lib/list_debug.c").read_text()
    config = _config(ksrc)
    nr_cpus = int(config["CONFIG_NR_CPUS"])
    pending_bits = 8 if nr_cpus < 1 << 14 else 1
    return {
        "slab_flags": {n: _slab_flag(ksrc, vmlinux, n) for n in ("SLAB_POISON", "SLAB_STORE_USER", "SLAB_RED_ZONE")},
        "track_items": {track.group(1): 0, track.group(2): 1} if track else {},
        "track_stack": "depot handle" if re.search(r"depot_stack_handle_t handle;", slub) else "addrs",
        "stack_depot_pools": _defines(depot_c, "stack_pools", "stack_slabs")[0],
        "stack_depot_count": next(n for n in ("pools_num", "pool_index", "depot_index")
                                  if re.search(rf"^static int {n};", depot_c.read_text(), re.M)),
        "stack_depot_index_field": next(n for n in ("pool_index_plus_1", "pool_index", "slabindex")
                                        if re.search(rf"u32 {n}\s*:", depot_text)),
        "mutex_owner": "atomic_long_t" if re.search(r"atomic_long_t\s+owner;", mutex) else "pointer",
        "list_checkers": re.findall(r"^bool (__list_\w+)\(", list_debug, re.M),
        "qspinlock": {"pending_shift": 8, "pending_bits": pending_bits, "tail_cpu_shift": 8 + pending_bits + 2},
        "vmalloc_areas": "vmap_nodes" if "static struct vmap_node *vmap_nodes" in
        (ksrc / "mm/vmalloc.c").read_text() else "vmap_area_list",
        "struct_slab": bool(re.search(r"^struct slab \{", (ksrc / "mm/slab.h").read_text(), re.M)),
        "slab_page_type": "PGTY_slab" in (ksrc / "include/linux/page-flags.h").read_text(),
    }  # fmt: skip


def write_manifest(fixtures: Path, work: Path, kernel: str) -> None:
    ksrc = work / f"linux-source-{kernel}"
    payload = payload_dir(fixtures, kernel)
    cases = {}
    for case_dir in sorted((payload / "cases").iterdir()):
        exp = json.loads((case_dir / "expected.json").read_text())
        cases[case_dir.name] = {"type": exp["type"], "title": exp["title"], "description": exp["description"]}
    manifest = {
        "format": 1,
        "kernel": kernel,
        "kernel_release": kernel_release(ksrc),
        "vmlinux_build_id": build_id(ksrc / "vmlinux"),
        "module_build_id": build_id(work / "kf_buggy.ko"),
        "vmlinux_sha256": sha256(ksrc / "vmlinux"),
        "kernel_facts": kernel_facts(ksrc, ksrc / "vmlinux"),
        "cases": cases,
        "sysroots": sorted(p.name for p in (payload / "sysroots").iterdir() if p.is_dir())
        if (payload / "sysroots").is_dir()
        else [],
        "files": [
            {"path": str(p.relative_to(payload)), "size": p.stat().st_size, "sha256": sha256(p)}
            for p in payload_files(payload)
        ],
    }
    (payload / "MANIFEST.json").write_text(json.dumps(manifest, indent=2) + "\n")
    total = sum(f["size"] for f in manifest["files"])
    print(f"{payload / 'MANIFEST.json'}: {len(manifest['files'])} files, {total / 1e6:.1f} MB", file=sys.stderr)


def add_facts(fixtures: Path, ksrc: Path, kernel: str, vmlinux: Path | None) -> None:
    """Add ``kernel`` and ``kernel_facts`` to an existing MANIFEST.json (its files stay as they are)."""
    path = payload_dir(fixtures, kernel) / "MANIFEST.json"
    manifest = json.loads(path.read_text())
    if kernel_release(ksrc) != manifest["kernel_release"]:
        sys.exit(f"{ksrc} is {kernel_release(ksrc)}, the payload {manifest['kernel_release']}")
    out: dict[str, Any] = {}
    for key, value in manifest.items():
        out[key] = value
        if key == "format":
            out["kernel"] = kernel
        if key == "vmlinux_sha256":
            out["kernel_facts"] = kernel_facts(ksrc, vmlinux)
    path.write_text(json.dumps(out, indent=2) + "\n")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--work", type=Path, required=True, help="the kernel's work directory (work/<version>)")
    parser.add_argument("--fixtures", type=Path, required=True)
    parser.add_argument("--kernel", default="6.1", help="the fixture kernel version (6.1, 5.10, 6.12)")
    parser.add_argument("--manifest", action="store_true", help="write MANIFEST.json instead")
    parser.add_argument("--why-only", type=Path, metavar="KO", help="only add the why ground truth (module KO)")
    parser.add_argument(
        "--facts-only",
        type=Path,
        metavar="VMLINUX",
        nargs="?",
        const=Path("-"),
        help="only add kernel_facts to MANIFEST.json (the kernel tree need not be built)",
    )
    args = parser.parse_args()
    if args.why_only:
        add_why(args.fixtures, payload_dir(args.fixtures, args.kernel), args.why_only)
    elif args.facts_only:
        vmlinux = None if str(args.facts_only) == "-" else args.facts_only
        add_facts(args.fixtures, args.work / f"linux-source-{args.kernel}", args.kernel, vmlinux)
    elif args.manifest:
        write_manifest(args.fixtures, args.work, args.kernel)
    else:
        write_expected(args.fixtures, args.work, args.kernel)


if __name__ == "__main__":
    main()
