"""The ``kforensic vmcore`` result as a JSON document (``kforensic.vmcore/1``) and as markdown/text."""

from __future__ import annotations

from collections import Counter
from typing import Any

from forensics.model import Finding, FindingKind, NotAvailable
from forensics.quoting import shown_path
from forensics.report.document import (
    PASTE_LANG,
    Block,
    BulletList,
    Code,
    Document,
    Lines,
    Paragraph,
    Section,
    Table,
    to_markdown,
)
from forensics.report.formats import Destination
from forensics.report.markdown import code_span, md_escape, next_step_md, render_markdown
from forensics.serialize import incident_to_dict, json_value
from forensics.types.results import VmcoreResult
from forensics.types.vmcore import (
    CrashSnapshot,
    FaultAnalysis,
    FieldRef,
    Frame,
    FrameValues,
    SlabCacheInfo,
    TaskInfo,
    ValueRead,
    crash_opens,
    crash_version_text,
    opened_by_some_crash,
)
from forensics.units import iso_utc

VMCORE_SCHEMA = "kforensic.vmcore/1"
LOG_TAIL = 25
#: The log excerpt of the markdown: from the first report's header to the end, its head and tail kept when longer.
EXCERPT_HEAD, EXCERPT_TAIL = 45, 15


def log_excerpt(result: VmcoreResult) -> tuple[int, list[str]]:
    """The log lines shown under "Kernel log in the dump" (1-based number of the first, the lines): from the first
    report's header to the log's end, so the report is read whole, its BUG and RIP lines with it; the last 25
    lines started inside the register dump, its second CR2 unexplained (ue24 F9).  Without a report, the last
    lines.  A longer stretch keeps its head and its tail, a line saying how many lie between."""
    log = result.snapshot.log
    first = min(r.start_line for r in result.reports) if result.reports else max(1, len(log) - LOG_TAIL + 1)
    lines = [f"{r.stamp()} {r.text}" for r in log[first - 1 :]]
    if len(lines) > EXCERPT_HEAD + EXCERPT_TAIL + 1:
        left = len(lines) - EXCERPT_HEAD - EXCERPT_TAIL
        lines = [
            *lines[:EXCERPT_HEAD],
            f"... ({left} lines: kforensic dmesg on the dump's log shows them)",
            *lines[-EXCERPT_TAIL:],
        ]
    return first, lines


def _frame(f: Frame, s: CrashSnapshot) -> dict[str, Any]:
    return {
        "index": f.index,
        "function": json_value(f.function),
        "pc": f"{f.pc:#x}",
        "offset": f.offset,
        "size": f.size,
        "module": f.module,
        "source": f.where(),  # as the debug info names it
        "local_source": _local_where(s, f),
        "inline": f.inline,
        "symbol": f.symbol,
        "exception_frame": f.interrupted,
    }


def _local_where(s: CrashSnapshot, f: Frame | None) -> str | None:
    """``file:line`` of the copy of the frame's source found via --source-dir; None where the debug info's path is
    the one to open (or nothing was found)."""
    if f is None or f.source_file is None or isinstance(s.follow_up, NotAvailable):
        return None
    # The path's own string (a text report shows it escaped where it holds a control character: CrashSnapshot.cite).
    found = s.follow_up.found_source(f.source_file)
    return None if found is None else f"{found}:{f.source_line}" if f.source_line else found


def _values_frame(s: CrashSnapshot, fv: FrameValues) -> Frame | None:
    return next((f for f in s.backtrace if f.index == fv.frame), None)


def _field(ref: FieldRef | NotAvailable) -> object:
    if isinstance(ref, NotAvailable):
        return json_value(ref)
    m = ref.member
    return {"struct": ref.struct, "member": m.name, "offset": m.offset, "type": m.type_name}


def _fault(fault: FaultAnalysis | NotAvailable) -> object:
    if isinstance(fault, NotAvailable):
        return json_value(fault)
    return {
        "instruction": {"address": f"{fault.instruction.address:#x}", "text": fault.instruction.text()},
        "base_register": fault.base_register,
        "base_value": None if fault.base_value is None else f"{fault.base_value:#x}",
        "displacement": fault.displacement,
        "effective_address": None if fault.effective_address is None else f"{fault.effective_address:#x}",
        "fault_address": None if fault.fault_address is None else f"{fault.fault_address:#x}",
        "address_agrees": fault.address_agrees,
        "null_expression": json_value(fault.null_expression),
        "null_field": _field(fault.null_field),
        "read_member": _field(fault.read_member),
        "confidence": fault.confidence,
        "steps": list(fault.steps),
        "stopped": fault.stopped,
    }


def _read(v: ValueRead) -> dict[str, Any]:
    out: dict[str, Any] = {"expression": v.expression, "type": v.type_name}
    if v.missing is not None:
        out["not_available"] = v.missing
    else:
        out["value"] = v.value
        out["text"] = v.text
    return out


#: The root-cause class each explaining finding kind stands for (the JSON's ``why.root_cause.class``).
ROOT_CAUSE_CLASSES: dict[FindingKind, str] = {
    FindingKind.BUG_CONDITION: "bug_condition",
    FindingKind.LIST_CORRUPTION: "list_corruption",
    FindingKind.LOCKUP_LOOP: "busy_wait",
    FindingKind.DEADLOCK: "lock_cycle",
    FindingKind.OOM_USERS: "oom",
    FindingKind.SUSPICIOUS_VALUES: "corrupted_values",
    FindingKind.HUNG_TASK: "lock_wait",
    FindingKind.NULL_FIELD: "null_pointer",
    FindingKind.OUTSIZED_SLAB: "memory_leak",
    FindingKind.DOUBLE_FREE: "double_free",
    FindingKind.USE_AFTER_FREE: "use_after_free",
    FindingKind.SPINLOCK_DEADLOCK: "spinlock_deadlock",
    FindingKind.CRASH: "crash_site",  # the crash itself (the crash-site and deliberate-crash rules)
}


def _root_cause(result: VmcoreResult) -> dict[str, Any] | None:
    """The class and statement of the first-ranked hypothesis, and the finding it is read from first."""
    if not result.analysis.hypotheses:
        return None
    top = result.analysis.hypotheses[0]
    by_id = {f.id: f for f in result.analysis.findings}
    source = by_id.get(top.finding_ids[0]) if top.finding_ids else None
    kind = source.kind if source is not None else None
    return {
        "class": "crash_site" if kind is None else ROOT_CAUSE_CLASSES.get(kind, str(kind)),
        "statement": top.statement,
        "confidence": top.confidence,
        "finding": source.id if source is not None else None,
    }


def _why(result: VmcoreResult) -> dict[str, Any]:
    """The values behind the explanation: BUG/WARN site, frame values, loop, addresses, memory users."""
    s = result.snapshot
    site: object
    if isinstance(s.bug_site, NotAvailable):
        site = json_value(s.bug_site)
    else:
        b = s.bug_site
        src = b.source
        site = {
            "frame": b.frame,
            "pc": f"{b.pc:#x}",
            "function": b.function,
            "file": b.file,
            # the reason BugSite.where() says in the trap fact (the bug table entry not in the dump, no DWARF line)
            "line": b.line if b.line is not None else json_value(NotAvailable(b.line_missing or "not read")),
            "warning": b.warning,
            "bug_table": b.table,
            "source": json_value(src)
            if isinstance(src, NotAvailable)
            else {
                "path": src.path,
                "line": src.line,
                "text": src.text,
                "found_via": src.found_via,
                "matches_build": src.matches_build,
                "mismatch": src.mismatch,
            },
            "operands": [_read(o) for o in b.operands],
        }
    loop: object = json_value(s.loop) if isinstance(s.loop, NotAvailable) else {
        "frame": s.loop.frame,
        "function": s.loop.function,
        "condition": json_value(s.loop.condition),
        "source": json_value(s.loop.source)
        if isinstance(s.loop.source, NotAvailable)
        else f"{s.loop.source.path}:{s.loop.source.line}",
        "operands": [_read(o) for o in s.loop.operands],
        "loop_reads_memory": s.loop.loop_reads_memory,
        # The loop's first and last instruction (its backward jump), as the text says "a loop at A..B".
        "body": None if s.loop.body is None else {"first": f"{s.loop.body[0]:#x}", "last": f"{s.loop.body[1]:#x}"},
    }  # fmt: skip
    users: object = (
        json_value(s.memory_users)
        if isinstance(s.memory_users, NotAvailable)
        else [{"kind": u.kind, "name": u.name, "bytes": u.bytes, "pid": u.pid} for u in s.memory_users[:15]]
    )
    return {
        "root_cause": _root_cause(result),
        "bug_site": site,
        "frame_values": [
            {
                "frame": fv.frame,
                "function": fv.function,
                "source": fv.location,
                "local_source": _local_where(s, _values_frame(s, fv)),
                "variables": [_read(v) for v in fv.variables],
                "members": [_read(v) for v in fv.members],
            }
            for fv in s.frame_values
        ],
        "loop": loop,
        "addresses": [
            {
                "address": f"{a.address:#x}",
                "seen_in": a.origin,
                "kind": a.kind,
                "cache": a.cache,
                "cache_aliases": list(a.cache_aliases),
                "object_start": None if a.object_start is None else f"{a.object_start:#x}",
                "object_size": a.object_size,
                "offset": a.offset,
                "allocated": a.allocated,
                "symbol": a.symbol,
                "words": [f"{w:#018x}" for w in a.words],
                "not_available": a.missing,
            }
            for a in s.addresses
        ],
        "memory_users": users,
        **_objects_and_locks(s),
        "explanations": [
            {
                "kind": f.kind,
                "title": f.title,
                "confidence": f.confidence,
                "facts": {x.name: x.value for x in f.shown_facts},
            }
            for f in explaining(result)
        ],
    }


def explaining(result: VmcoreResult) -> list[Finding]:
    """The findings that state a cause, in the order of the hypotheses they are read from: the root cause first,
    what could not be evaluated (a BUG without its source: a low-ranked hypothesis) last."""
    rank: dict[str, int] = {}
    for h in result.analysis.hypotheses:
        for fid in h.finding_ids:
            rank.setdefault(fid, h.rank)
    stating = [f for f in result.analysis.findings if f.stated is not None and f.stated.statement]
    return sorted(stating, key=lambda f: rank.get(f.id, len(rank) + len(stating)))


def _objects_and_locks(s: CrashSnapshot) -> dict[str, Any]:
    """The slab objects the crash touched (state, SLUB's tracks, who points at them) and the spinlock spun on."""
    from forensics.types.vmcore import SlabTrack, SpinLockState

    def track(t: SlabTrack) -> dict[str, Any]:
        stack = [f.function for f in t.stack if isinstance(f.function, str)]
        return {"kind": t.kind, "caller": t.caller, "pid": who(t, t.pid), "cpu": who(t, t.cpu), "jiffies": t.when,
                "stack": stack, "not_available": t.missing}  # fmt: skip

    def who(t: SlabTrack, value: int | None) -> object:
        """A track's pid or CPU as SlabTrack.who() says it; null in a track not read (its not_available says why)."""
        if value is not None or t.unread():
            return value
        return json_value(NotAvailable(t.WHO_MISSING))

    def owner_cpu(lock: SpinLockState) -> object:
        """The owner's CPU as SpinLockState.owner_text() says it; null only without an owner (a qspinlock has none)."""
        if lock.owner is None:
            return None
        if lock.owner_cpu is not None:
            return lock.owner_cpu
        return json_value(NotAvailable(lock.owner_cpu_missing or "not read"))

    lock: object = json_value(s.spinlock) if isinstance(s.spinlock, NotAvailable) else {
        "address": f"{s.spinlock.address:#x}", "symbol": s.spinlock.symbol, "found_via": s.spinlock.found_via,
        "word": None if s.spinlock.word is None else f"{s.spinlock.word:#x}", "locked": s.spinlock.locked,
        "pending": s.spinlock.pending, "tail_cpu": s.spinlock.tail_cpu, "owner": s.spinlock.owner,
        "owner_cpu": owner_cpu(s.spinlock), "takers": list(s.spinlock.takers), "not_available": s.spinlock.missing,
    }  # fmt: skip
    objects = [
        {"start": f"{o.start:#x}", "cache": o.cache, "cache_aliases": list(o.cache_aliases),
         "object_size": o.object_size, "allocated": o.allocated, "store_user": o.store_user, "poisoned": o.poisoned,
         "tracks": [track(t) for t in o.tracks], "tracks_not_available": o.tracks_missing,
         "referenced_by": list(o.referenced_by), "seen_in": list(o.seen_in)}
        for o in s.slab_objects
    ]  # fmt: skip
    return {"slab_objects": objects, "spinlock": lock}


def _follow_up_json(s: CrashSnapshot) -> object:
    f = s.follow_up
    if isinstance(f, NotAvailable):
        return json_value(f)
    return {
        "debug_info": {"vmlinux": json_value(f.vmlinux), "via": f.debug_info_via},
        "crash": json_value(f.crash()),
        "crash_setup": list(f.crash_setup()),
        # The installed crash and whether it opens this dump (CRASH_REACH): true, false or {"not_available": why}.
        "crash_version": json_value(
            f.crash_version if isinstance(f.crash_version, NotAvailable) else crash_version_text(f.crash_version)
        ),
        "crash_opens": json_value(crash_opens(s.kernel_release, f.crash_version)),
        "drgn": json_value(f.drgn()),
        "shell": f.shell(),
        "modules": [{"name": n, "debug_file": p} for n, p in f.modules],
        "sources": [{"debug_info": d, "local": p} for d, p in f.sources],
        "unused_sources": [{"debug_info": d, "local": p, "why": why} for d, p, why in f.unused_sources],
    }


def completion_json(task: TaskInfo) -> object:
    """The completion a D-state task waits on, as its hung-task finding names it (read from its wait's frame):
    ``{"not_available": why}`` where its stack shows a completion's wait but none was read, null where it waits on
    a lock or on no completion; a done count or waiters not read are null, ``not_available`` saying why."""
    read = task.completion_wait()
    if read is None or isinstance(read, NotAvailable):
        return json_value(read)
    # a value not read is null, the reason for it in not_available (CompletionWait.missing names which)
    done = None if isinstance(read.done, NotAvailable) else read.done
    waiters = None if isinstance(read.other_waiters, NotAvailable) else list(read.other_waiters)
    return {"address": f"{read.address:#x}", "frame": read.frame, "function": read.function, "done": done,
            "other_waiters": waiters, "not_available": read.missing}  # fmt: skip


def _taint(result: VmcoreResult) -> dict[str, Any]:
    taint = result.taint
    if isinstance(taint, NotAvailable):
        return {"not_available": taint.reason}
    return {"mask": taint.mask, "letters": taint.letters, "flags": list(taint.flags)}


def to_document(result: VmcoreResult) -> dict[str, Any]:
    """The ``kforensic.vmcore/1`` document."""
    s = result.snapshot
    states = Counter(t.state for t in s.tasks)
    return {
        "schema": VMCORE_SCHEMA,
        "dump": {
            "path": s.dump_path,
            "format": s.dump_format,
            "filtered": json_value(s.filtered),
            "cut": s.cut,
            "dmesg": result.dmesg_path,
        },
        "summary": {
            "kernel_release": json_value(s.kernel_release),
            "build_id": json_value(s.build_id),
            "machine": json_value(s.machine),
            "vmlinux": json_value(s.vmlinux_path),
            "crash_time": json_value(s.crash_time),
            "uptime_seconds": json_value(s.uptime),
            "panic_message": json_value(s.panic_message),
            "crashed": {
                "cpu": json_value(s.crashed_cpu),
                "pid": json_value(s.crashed_pid),
                "comm": json_value(s.crashed_comm),
            },
            "taint": _taint(result),
            "cpus": json_value(s.cpus),
            "memory_bytes": json_value(s.memory_bytes),
        },
        "backtrace": [_frame(f, s) for f in s.backtrace],
        "frame_symbols": s.frame_symbols,
        "crash_frame": None if result.analysis.crash_frame is None else result.analysis.crash_frame.index,
        "culprit_frame": None if result.analysis.culprit_frame is None else result.analysis.culprit_frame.index,
        "fault": _fault(result.fault),
        "why": _why(result),
        "other_cpus": [
            {
                "cpu": cpu,
                "pid": t.pid,
                "comm": t.comm,
                "halted_at": None if t.halted_at is None else f"{t.halted_at:#x}",
                "backtrace": [_frame(f, s) for f in t.stack],
            }
            for cpu, t in s.other_cpus
        ],
        "tasks": {
            "count": len(s.tasks),
            "by_state": dict(sorted(states.items())),
            # the count and states are of the tasks read: "unknown" says how many more the dump hid
            "complete": s.task_census.complete,
            "unknown": json_value(s.task_census.unseen()),
            "incomplete_because": s.task_census.why_incomplete() or None,
            "list_breaks": [
                {"direction": b.direction, "after_pid": b.after_pid, "address": b.address, "reason": b.reason}
                for b in s.task_census.breaks
            ],
            "blocked": [
                {
                    "pid": t.pid,
                    "comm": t.comm,
                    "blocked_on": t.blocked_on,
                    "lock_owner_pid": t.lock_owner_pid,
                    # null without an owner; an owner whose name was not read says why (TaskInfo.lock_owner_text)
                    "lock_owner_comm": t.lock_owner_comm
                    if t.lock_owner_comm is not None or t.lock_owner_pid is None
                    else json_value(NotAvailable(t.lock_owner_missing or "not read")),
                    "completion": completion_json(t),
                    "backtrace": [_frame(f, s) for f in t.stack],
                }
                for t in s.tasks
                if t.state == "D"
            ],
        },
        "memory": {k: json_value(v) for k, v in vars(s.memory).items()},
        "slab_top": [
            {
                "name": c.name,
                "object_size": c.object_size,
                "active": c.active_objects
                if c.active_objects is not None
                else json_value(NotAvailable(c.active_missing or "not counted")),
                "total": c.total_objects
                if c.total_objects is not None
                else json_value(NotAvailable(c.active_missing or "not counted")),
                "bytes": c.total_bytes,
            }
            for c in s.slab_caches[:15]
        ],
        "modules": [{"name": m.name, "taints": m.taints, "debug_info": m.debug_info} for m in s.modules],
        "log": {
            "reports": [
                {"title": r.title, "type": r.kind.value, "frame": json_value(r.frame), "line": r.start_line}
                for r in result.reports
            ],
            "tail": [f"{r.stamp()} {r.text}" for r in s.log[-LOG_TAIL:]],
            "excerpt": dict(zip(("first_line", "lines"), log_excerpt(result), strict=True)),
        },
        "hypotheses": [
            {
                "rank": h.rank,
                "statement": h.statement,
                "confidence": h.confidence,
                "supporting": list(h.supporting),
                "against": list(h.against),
                "next_command": h.next_command,
            }
            for h in result.analysis.hypotheses
        ],
        "follow_up": _follow_up_json(s),
        "warnings": list(s.warnings),
        "incident": incident_to_dict(result.incident),
    }


def _when(value: float | NotAvailable) -> str:
    if isinstance(value, NotAvailable):
        return str(value)
    return iso_utc(value)


def _mib(value: int | NotAvailable | None) -> str:
    if value is None or isinstance(value, NotAvailable):
        return str(value) if isinstance(value, NotAvailable) else "?"
    return f"{value / 2**20:.1f} MiB"


def _disassembly(result: VmcoreResult) -> Block:
    fault = result.fault
    if isinstance(fault, NotAvailable):
        return Paragraph(f"Not available: {fault.reason.removeprefix('not available: ')}")
    code = result.snapshot.code
    snap = result.snapshot
    lines_by_addr = {a: (f, n) for a, f, n in code.source_lines} if not isinstance(code, NotAvailable) else {}
    body = []
    for insn in fault.window:
        mark = "=>" if insn.address == fault.instruction.address else "  "
        src = snap.cite(*lines_by_addr[insn.address]) if insn.address in lines_by_addr else ""
        body.append(f"{mark} {insn.address:#x}  {insn.text():<44} {src}".rstrip())
    return Code("\n".join(body))


def _continued(parts: tuple[str, ...]) -> str:
    """A shell command written over lines (``\\`` continuations): short lines that paste as one command."""
    return " \\\n    ".join(parts)


def _found_sources(s: CrashSnapshot) -> tuple[Block, ...]:
    """Which file each path of the backtrace's debug info is here (crash's ``bt -l`` and drgn print the debug
    info's: the build machine's path)."""
    if isinstance(s.follow_up, NotAvailable):
        return ()
    files = dict.fromkeys(f.source_file for f in s.backtrace if f.source_file)
    found = [(path, s.follow_up.found_source(path)) for path in files]
    lines = tuple(
        f"{code_span(shown_path(local))}, named {code_span(shown_path(path))} in the debug info"
        for path, local in found
        if local
    )
    unused = [(path, s.follow_up.unused_source(path)) for path in files]
    rejected = tuple(
        f"{code_span(shown_path(u[0]))}, found for {code_span(shown_path(path))}: {md_escape(u[1])}"
        for path, u in unused
        if u
    )
    out: list[Block] = [Paragraph("Source files found via --source-dir:"), BulletList(lines)] if lines else []
    if rejected:
        # The locations above keep the debug info's path: this copy would send the reader to other lines.
        out += [Paragraph("Copies found via --source-dir and not cited (not the source of the build):")]
        out += [BulletList(rejected)]
    return tuple(out)


def _follow_up_section(result: VmcoreResult) -> Section | None:
    """How to open the dump by hand: the sessions the ``crash>`` and ``>>>`` commands run in."""
    f = result.snapshot.follow_up
    if isinstance(f, NotAvailable):
        return None
    crash, drgn = f.crash_parts(), f.drgn_parts()
    blocks: list[Block] = [Paragraph(f"Debug info: `{f.vmlinux}` ({md_escape(f.debug_info_via)})")]
    release = result.snapshot.kernel_release
    opens = crash_opens(release, f.crash_version)
    installed = "" if isinstance(f.crash_version, NotAvailable) else f" {crash_version_text(f.crash_version)}"
    if isinstance(crash, NotAvailable):
        blocks.append(Paragraph(f"crash: not available: {md_escape(crash.reason)}"))
    elif opens is False:
        # crash 8.0.2 exits 1 on a 6.12 dump: its opening line sent the reader to a command that fails (ue10 #8).
        blocks.append(Paragraph(
            f"crash: not for this dump: the installed crash{installed} does not open {md_escape(str(release))} "
            "dumps (CRASH_REACH, forensics/types/vmcore.py); the steps run in drgn (a `crash>` step left needs a "
            "newer crash)."
        ))  # fmt: skip
    else:
        session = Code("\n".join((_continued(crash), *(f"crash> {c}" for c in f.crash_setup()))), PASTE_LANG)
        if isinstance(opens, NotAvailable) and opened_by_some_crash(release) is False:
            # No crash release is recorded to open this kernel: the steps are drgn's (detectors/vmcore/steps.py).
            blocks.append(Paragraph(
                f"Whether crash{installed} opens this dump: unknown: {md_escape(opens.reason)}; no crash release "
                f"is recorded to open {md_escape(str(release))} dumps (CRASH_REACH, forensics/types/vmcore.py), so "
                "the steps run in drgn. To try crash (a `crash>` step left needs it):"
            ))  # fmt: skip
        elif isinstance(opens, NotAvailable):  # said, not assumed: the steps stay crash's, to try
            blocks.append(Paragraph(
                f"Whether crash{installed} opens this dump: unknown: {md_escape(opens.reason)}. The `crash>` "
                "commands are crash's, to try in it (every `>>>` one runs in drgn):"
            ))  # fmt: skip
        else:
            blocks.append(
                Paragraph(f"The `crash>` commands run in crash{installed}, opened with the modules' debug info:")
            )
        blocks.append(session)
    if isinstance(drgn, NotAvailable):
        blocks.append(Paragraph(f"drgn: not available: {md_escape(drgn.reason)}"))
    else:
        blocks.append(Paragraph("The `>>>` commands run in drgn:"))
        blocks.append(Code(_continued(drgn), PASTE_LANG))
        blocks.append(Paragraph("or in drgn with the analysis' objects bound to names (`task`, `frame`, ...):"))
        blocks.append(Code(_continued(f.shell_parts()), PASTE_LANG))
    return Section("Follow-up", tuple(blocks))


def _why_sections(result: VmcoreResult) -> list[Block]:
    """The explanations (BUG/WARN condition, corruption, loop, locks, OOM) and the frame values."""
    s = result.snapshot
    why = [(f, f.stated) for f in explaining(result) if f.stated is not None]
    out: list[Block] = []
    if why:
        items: list[str] = []
        for f, stated in why:
            items.append(f"- **{md_escape(f.title)}** (confidence {f.confidence:.2f})")
            items += [f"  - {md_escape(x.name)}: {md_escape(x.said)}" for x in f.facts]
            items.append(f"  - next: {next_step_md(stated.next_command)}")
        out.append(Section("Why", (Lines(tuple(items)),)))
    if not isinstance(s.bug_site, NotAvailable) and isinstance(s.bug_site.source, NotAvailable):
        out.append(Paragraph(f"Source line not available: {md_escape(s.bug_site.source.reason)}"))
    if s.frame_values:
        lines = []
        for fv in s.frame_values:
            frame = _values_frame(s, fv)
            where = s.where(frame) if frame is not None else fv.location
            lines.append(f"#{fv.frame} {fv.function}  {where or ''}".rstrip())
            lines += [f"    {v.type_name} {v.expression} = {v.shown()}" for v in fv.variables]
            lines += [f"    {v.expression} = {v.shown()}" for v in fv.members]
        out.append(Section("Frame values", (Code("\n".join(lines)),)))
    return out


def _hypotheses_lines(result: VmcoreResult) -> Lines:
    out = []
    for h in result.analysis.hypotheses:
        next_md = next_step_md(h.next_command)
        out.append(f"{h.rank}. **{md_escape(h.statement)}** (confidence {h.confidence:.2f}) — next: {next_md}")
        out += [f"   - for: {md_escape(x)}" for x in h.supporting]
        out += [f"   - against: {md_escape(x)}" for x in h.against]
    return Lines(tuple(out))


def _objects_cell(c: SlabCacheInfo) -> str:
    """``1034/1155``; a count the dump cannot give is ``unknown (below)`` (both unknown: the cell once)."""
    if c.active_objects is None and c.total_objects is None:
        return "unknown (below)"
    counts = (c.active_objects, c.total_objects)
    return "/".join(str(n) if n is not None else "unknown (below)" for n in counts)


def _objects_unknown(c: SlabCacheInfo) -> str | None:
    """The line below the memory table that says why a cache's count is unknown; None when both are known."""
    if c.active_objects is None and c.total_objects is None:
        return f"{c.name}: objects in use and total {c.active_text()}"  # one slab walk gives both: one reason
    if c.active_objects is None:
        return f"{c.name}: objects in use {c.active_text()}"
    if c.total_objects is None:
        return f"{c.name}: objects in total {c.total_text()}"
    return None


def _memory(result: VmcoreResult) -> Section:
    s = result.snapshot
    m = s.memory
    usage = (m.total, m.free, m.slab_reclaimable, m.slab_unreclaimable, m.page_tables, m.kernel_stack)
    header = ("total", "free", "slab reclaimable", "slab unreclaimable", "page tables", "kernel stacks")
    shown = s.slab_caches[:10]
    # A count the dump cannot give is "unknown" in its cell and its reason (often long: which page makedumpfile
    # left out, and why) below the table.
    caches = tuple(
        (
            c.name,
            _objects_cell(c),
            str(c.object_size),
            "unknown (below)" if c.total_bytes is None else _mib(c.total_bytes),
        )
        for c in shown
    )
    unknown = tuple(Paragraph(text) for c in shown if (text := _objects_unknown(c)))
    return Section(
        "Memory",
        (
            Table(header, (tuple(_mib(v) for v in usage),)),
            Table(("slab cache", "objects", "object size", "total"), caches, escape="full"),
            # The in-use count is slabinfo's (drgn's slab_cache_usage): an estimate crash and drgn count otherwise.
            Paragraph(
                "objects: in use/total as /proc/slabinfo counts them (the free objects of a per-CPU slab count "
                "as in use): an upper estimate; crash's kmem -s (ALLOCATED) and drgn's "
                "slab_cache_for_each_allocated_object count objects exactly."
            ),
            *unknown,
        ),
    )


def vmcore_document(result: VmcoreResult) -> Document:
    """The dump's analysis as a document: summary, backtrace, why, fault, hypotheses, tasks, memory, log."""
    s = result.snapshot
    a = result.analysis
    top = a.findings[0] if a.findings else None
    blocks: list[Block] = []
    if top is not None:
        blocks.append(Paragraph(f"**{md_escape(top.title)}** — {md_escape(top.summary)}"))
    taint = _taint(result)
    taint_text = (", ".join(taint["flags"]) or "not tainted") if "mask" in taint else str(s.taint_mask)
    uptime = str(s.uptime) if isinstance(s.uptime, NotAvailable) else f"{s.uptime:.1f} s"
    summary = (
        "| | |",
        "|---|---|",
        f"| Dump | `{md_escape(s.dump_path)}` ({s.dump_format}; {md_escape(str(s.filtered))}) |",
        *((f"| Cut short | **{md_escape(s.cut)}** |",) if s.cut is not None else ()),
        f"| Kernel | {md_escape(str(s.kernel_release))} ({md_escape(str(s.machine))}), build ID {s.build_id} |",
        f"| Crash time | {_when(s.crash_time)}, uptime {uptime} |",
        f"| Panic | {md_escape(str(s.panic_message))} |",
        f"| Crashed task | {md_escape(str(s.crashed_comm))} (pid {s.crashed_pid}) on CPU {s.crashed_cpu} |",
        f"| Taint | {md_escape(taint_text)} |",
        f"| CPUs / memory | {s.cpus} / {_mib(s.memory_bytes)} |",
    )
    blocks.append(Section("Summary", (Lines(summary),)))
    trace = []
    for f in s.backtrace:
        # "(inlined)" is the label's; drgn marks the inlined calls at an exception's pc interrupted too, but the
        # exception frame is one physical frame: the real function's
        flags = " (exception frame)" if f.interrupted and not f.inline else ""
        trace.append(f"#{f.index:<2} {f.label()}{flags}  {s.where(f) or ''}".rstrip())
    sizes = Paragraph(f"Symbols, offsets and sizes: {md_escape(s.frame_symbols)}.")
    blocks.append(Section("Backtrace of the crashed thread", (Code("\n".join(trace)), sizes, *_found_sources(s))))
    blocks += _why_sections(result)
    fault: list[Block] = [_disassembly(result)]
    title = "Faulting instruction"
    if isinstance(result.fault, NotAvailable):
        pass
    elif result.fault.stopped is not None:  # a trap or a lockup's interrupt: nothing to reason about a fault
        title = "Where the CPU stopped"
        fault.append(Paragraph(f"{md_escape(result.fault.stopped)}."))
    else:
        steps = BulletList(tuple(md_escape(step) for step in result.fault.steps), ordered=True)
        fault.append(Section("Reasoning", (steps, Paragraph(md_escape(result.fault.confidence_text())))))
    blocks.append(Section(title, tuple(fault)))
    follow_up = _follow_up_section(result)
    if follow_up is not None:
        blocks.append(follow_up)
    if a.hypotheses:
        blocks.append(Section("Hypotheses", (_hypotheses_lines(result),)))
    if s.other_cpus:
        cpus: list[Block] = []
        for cpu, t in s.other_cpus:
            cpus += [
                Paragraph(
                    f"CPU {cpu}: {md_escape(t.comm)} (pid {t.pid})"
                    + (f", halted: {t.halt_text()}" if t.halt_text() else "")
                ),
                Code("\n".join(f"#{f.index} {f.label()}" for f in t.stack) or "no stack"),
            ]
        blocks.append(Section("Other CPUs", tuple(cpus)))
    tasks: list[Block] = [Paragraph(md_escape(task_census_line(s)))]
    blocked = []
    for t in s.tasks:
        if t.state == "D":
            owner = f", lock owner {t.lock_owner_text()}" if t.lock_owner_pid else ""
            ran = f", last ran {t.last_run_ns / 1e9:.1f} s before the crash" if t.last_run_ns is not None else ""
            blocked.append(f"D: {md_escape(t.comm)} (pid {t.pid}) on {md_escape(t.waits_for())}{owner}{ran}")
    if blocked:
        tasks.append(BulletList(tuple(blocked)))
    blocks.append(Section("Tasks", tuple(tasks)))
    blocks.append(_memory(result))
    modules = tuple(
        md_escape(mod.name)
        + (f" (taint {mod.taints})" if mod.taints else "")
        + ("" if mod.debug_info else " — no debug info")
        for mod in s.modules
    )
    blocks.append(Section("Modules", (BulletList(modules) if modules else Paragraph("none"),)))
    reports = tuple(f"line {r.start_line}: {md_escape(r.title)}" for r in result.reports)
    first, shown = log_excerpt(result)
    said = Paragraph(
        f"Lines {first}-{len(s.log)} of {len(s.log)}" + (", from the first report's header:" if result.reports else ":")
    )
    tail = Code("\n".join(shown) or "empty")
    log: list[Block] = [BulletList(reports) if reports else Paragraph("no kernel reports found in the log"), said, tail]
    blocks.append(Section("Kernel log in the dump", tuple(log)))
    if s.warnings:
        blocks.append(Section("Warnings", (BulletList(tuple(md_escape(w) for w in s.warnings)),)))
    return Document("kforensic vmcore report", tuple(blocks))


def task_census_line(s: CrashSnapshot) -> str:
    """``38 tasks: D 1, S 17``; when the dump hid some, the figure is of those read, with how many more and why."""
    states = ", ".join(f"{k} {v}" for k, v in sorted(Counter(t.state for t in s.tasks).items()))
    census = s.task_census
    if census.complete:
        return f"{len(s.tasks)} tasks: {states}"
    unseen = census.unseen()
    more = (
        f"unknown how many more ({unseen.reason})"
        if isinstance(unseen, NotAvailable)
        else f"{unseen} more not read, state unknown"
    )
    return f"{len(s.tasks)} tasks read: {states}; incomplete, {more}: {census.why_incomplete()}"


def render_vmcore_markdown(result: VmcoreResult) -> str:
    """The full vmcore report as markdown: the analysis, then the incident's findings."""
    return to_markdown(vmcore_document(result)) + "\n" + render_markdown(result.incident)


class VmcoreRenderer:
    """``kforensic vmcore``'s report: the markdown on a terminal (rich), the markdown, or kforensic.vmcore JSON."""

    def text(self, result: VmcoreResult, to: Destination) -> str:
        import io

        from forensics.report.terminal import pastable_markdown, text_console

        buf = io.StringIO()
        # crop=False: the commands to paste run past the width rather than be folded (pastable_markdown)
        text_console(buf, color=to.color, width=110).print(
            pastable_markdown(render_vmcore_markdown(result)), crop=False
        )
        return buf.getvalue()

    def markdown(self, result: VmcoreResult, to: Destination) -> str:
        return render_vmcore_markdown(result)

    def json(self, result: VmcoreResult, to: Destination) -> str:
        import json  # here: the text format does not need it (~2 ms of start-up)

        return json.dumps(to_document(result), indent=2, ensure_ascii=False) + "\n"

    def html(self, result: VmcoreResult, to: Destination) -> str:
        from forensics.report.html import document_page

        return document_page(vmcore_document(result), result.incident)
