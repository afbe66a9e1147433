"""``kforensic kdump`` rendered: the checklist and the setup plan as text, markdown and JSON."""

from __future__ import annotations

import json
from typing import Any

from forensics.report.formats import Destination
from forensics.types.results import KdumpCheck, KdumpSetup

CHECK_SCHEMA = "kforensic.kdump-check/1"


SETUP_SCHEMA = "kforensic.kdump-setup/1"
#: The statuses the summary line always counts.
CORE_STATUSES = frozenset({"pass", "warn", "fail"})


def _size(value: object) -> object:
    from forensics.model import NotAvailable

    return {"not_available": value.reason} if isinstance(value, NotAvailable) else value


def check_document(check: KdumpCheck) -> dict[str, Any]:
    """The ``kforensic.kdump-check/1`` document."""
    state, checklist = check.state, check.checklist
    from forensics.serialize import evidence_to_dict, incident_to_dict
    from forensics.types.kdump import Status, format_size

    est = checklist.estimate
    return {
        "schema": CHECK_SCHEMA,
        "root": state.root,
        "distro": {
            "id": state.distro.id,
            "version_id": state.distro.version_id,
            "name": state.distro.name,
            "family": state.distro.family.value,
        },
        "ready": checklist.ready,
        "kernel_ready": checklist.kernel_ready,
        "counts": {s.value: checklist.count(s) for s in Status},
        "crashkernel": {
            # None when no value it rests on was read (Estimate.grounded): the text says why
            "recommended": format_size(est.recommended) if est.grounded else None,
            "recommended_bytes": est.recommended if est.grounded else None,
            "estimated_bytes": est.estimated,
            "kernel_bytes": _size(est.kernel),
            "initrd_bytes": _size(est.initrd),
            "modules_bytes": _size(est.modules),
            "runtime_bytes": est.runtime,
            "floor_bytes": est.floor,
            "floor_crashkernel": est.floor_crashkernel,
            "floor_source": est.floor_source,
            "complete": est.complete,
        },
        "checks": [
            {
                "id": line.id,
                "title": line.title,
                "status": line.status.value,
                "detail": line.detail,
                "why": line.why,
                "fix": line.fix,
                "kernel_side": line.kernel_side,
                "severity": line.severity.value,
                "blocked_by": None
                if line.blocked_by is None
                else {"check": line.blocked_by.line_id, "reason": line.blocked_by.reason},
                "evidence": [evidence_to_dict(e) for e in line.evidence],
            }
            for line in checklist.lines
        ],
        "incident": incident_to_dict(check.incident),
    }


def render_check(check: KdumpCheck, md: bool) -> str:
    """The checklist as text or markdown."""
    state, checklist = check.state, check.checklist
    from forensics.types.kdump import Status, describe_estimate

    verdict = "READY: the next crash will be captured" if checklist.ready else "NOT READY: the next crash will be lost"
    if checklist.unknown:
        unread = [line.title for line in checklist.unread_needed() if not line.kernel_side]
        kernel_unread = not checklist.kernel_ready
        parts = (["the kernel side"] if kernel_unread else []) + ([", ".join(unread)] if unread else [])
        verdict = f"NOT KNOWN TO BE READY: {' and '.join(parts)} could not be read"
    # pass, warn and fail always; blocked only when a line is; the lines not read apart, never among the faults
    counts = ", ".join(
        f"{checklist.count(s)} {s.value}"
        for s in Status
        if s is not Status.UNKNOWN and (s.value in CORE_STATUSES or checklist.count(s))
    )
    if checklist.count(Status.UNKNOWN):
        counts += f"; {checklist.count(Status.UNKNOWN)} could not be judged (unknown)"
    kernel_fails = any(x.kernel_side and x.status is Status.FAIL for x in checklist.lines)
    kernel = "ready" if checklist.kernel_ready else "not ready" if kernel_fails else "unknown"
    out = [
        f"{'# ' if md else ''}kforensic kdump check: {state.distro.name} (root {state.root})",
        "",
        f"{'- ' if md else ''}recommended crashkernel: {describe_estimate(checklist.estimate)}",
        "",
    ]
    for line in checklist.lines:
        mark = line.status.value.upper()
        out.append(f"- **{mark}** {line.title}: {line.detail}" if md else f"[{mark}] {line.title}: {line.detail}")
        if line.status.value != "pass":
            indent = "  - " if md else "       "
            if line.blocked_by is not None:
                out.append(f"{indent}blocked by: {line.blocked_by.reason} ({line.blocked_by.title})")
            out.append(f"{indent}why: {line.why}")
            out.append(f"{indent}fix: {line.fix}")
            out.extend(f"{indent}seen: {e.cite()}: {e.excerpt}" for e in line.evidence)
    out += ["", f"{'**' if md else ''}{verdict}{'**' if md else ''} ({counts}; kernel side {kernel})", ""]
    return "\n".join(out)


def setup_document(setup: KdumpSetup) -> dict[str, Any]:
    """The ``kforensic.kdump-setup/1`` document."""
    check, plan, applied, ran = setup.check, setup.plan, setup.applied, dict(setup.ran)
    state, checklist = check.state, check.checklist
    from forensics.serialize import incident_to_dict

    backups = {a.path: a.backup for a in applied or ()}
    commands = [*([plan.install] if plan.install else []), *plan.commands]

    def command_status(argv: tuple[str, ...]) -> str:
        if applied is None:
            return "planned"
        return "run" if argv in ran else "to run on the target system"

    return {
        "schema": SETUP_SCHEMA,
        "root": state.root,
        "distro": state.distro.name,
        "family": plan.family.value,
        "policy": plan.policy,
        "applied": applied is not None,
        "ready_before": checklist.ready,
        "packages": list(plan.packages),
        "changes": [
            {
                "path": c.path,
                "action": "create" if c.old is None else "modify",
                "reason": c.reason,
                "diff": c.diff(),
                "backup": backups.get(c.path),
            }
            for c in plan.changes
        ],
        "commands": [
            {
                "argv": list(c.argv),
                "reason": c.reason,
                "status": command_status(c.argv),
                "returncode": ran.get(c.argv),
                "backs_up": list(c.backup),
                "backup": [backups[p] for p in c.backup if p in backups],
            }
            for c in commands
        ],
        "manual": [*plan.boot_steps, *plan.manual],
        "boot_steps": list(plan.boot_steps),
        "unread": list(plan.unread),
        "held_back": list(plan.held_back),
        "reboot_needed": plan.reboot_needed,
        "reboot_reason": plan.reboot_reason,
        "incident": incident_to_dict(check.incident),
    }


def _nothing_to_change(manual: int, reboot: bool) -> str:
    """The plan's first line when setup has nothing to install, change or run: "Nothing to do" only when nothing is
    left at all.  Above steps by hand or a reboot it read as a plan complete (an Arch machine with no kdump tooling
    and nothing reserved: "Nothing to do", then three things only its user could do)."""
    if not manual and not reboot:
        return "Nothing to do: the configuration is already as the plan wants it."
    steps = [f"{manual} step(s) only you can do"] if manual else []
    steps += ["a reboot"] if reboot else []
    return f"Nothing kdump setup can change here; left: {' and '.join(steps)}:"


def render_setup(setup: KdumpSetup, md: bool) -> str:
    """The plan (and what was done) as text or markdown."""
    doc = setup_document(setup)
    head = "# " if md else ""
    done = doc["applied"]
    out = [f"{head}kforensic kdump setup: {doc['distro']} (root {doc['root']}, policy {doc['policy']})", ""]
    if doc["unread"]:
        # What was not read may need changes of its own: never "nothing to do" over it.
        out.append(f"Not read, so not planned: {'; '.join(doc['unread'])}.")
    elif not (doc["packages"] or doc["changes"] or doc["commands"] or doc["held_back"] or doc["boot_steps"]):
        out.append(_nothing_to_change(len(doc["manual"]), doc["reboot_needed"]))
    if doc["packages"]:
        out.append(f"{'## ' if md else ''}Packages to install: {' '.join(doc['packages'])}")
        out.append("")
    for change in doc["changes"]:
        verb = ("created" if change["action"] == "create" else "changed") if done else f"to {change['action']}"
        backup = f" (backup {change['backup']})" if change["backup"] else ""
        out.append(f"{'## ' if md else ''}File {change['path']} {verb}{backup}: {change['reason']}")
        out += ["```diff", change["diff"].rstrip("\n"), "```", ""] if md else ["", change["diff"].rstrip("\n"), ""]
    if doc["commands"]:
        out.append(f"{'## ' if md else ''}Commands:")
        for command in doc["commands"]:
            rc = f", exit {command['returncode']}" if command["returncode"] is not None else ""
            argv = " ".join(command["argv"])
            if command["backup"]:
                rc += f", backup {', '.join(command['backup'])}"
            elif command["backs_up"] and command["status"] == "to run on the target system":
                rc += f", copy {', '.join(command['backs_up'])} first"
            elif command["backs_up"]:
                rc += f", a copy of {', '.join(command['backs_up'])} kept first"
            if md:
                out.append(f"- `{argv}` — {command['reason']} [{command['status']}{rc}]")
            else:
                out.append(f"  {argv}    # {command['reason']} [{command['status']}{rc}]")
        out.append("")
    for step in doc["manual"]:
        out.append(f"{'- ' if md else ''}manual: {step}")
    for held in doc["held_back"]:
        out.append(f"{'- ' if md else ''}not planned: {held}")
    if doc["reboot_needed"]:
        out.append(f"Reboot needed: {doc['reboot_reason']}.")
    if not done and (doc["changes"] or doc["commands"] or doc["packages"]):
        out.append("Nothing was changed. Run again with --apply to carry out this plan.")
    return "\n".join(out).rstrip("\n") + "\n"


class KdumpCheckRenderer:
    """``kforensic kdump check``: the checklist and the verdict; or kforensic.kdump-check/1."""

    def text(self, result: KdumpCheck, to: Destination) -> str:
        return render_check(result, False)

    def markdown(self, result: KdumpCheck, to: Destination) -> str:
        return render_check(result, True)

    def json(self, result: KdumpCheck, to: Destination) -> str:
        return json.dumps(check_document(result), indent=2, ensure_ascii=False) + "\n"

    def html(self, result: KdumpCheck, to: Destination) -> str:
        from forensics.report.html import markdown_page

        return markdown_page("kforensic kdump check", render_check(result, True))


class KdumpSetupRenderer:
    """``kforensic kdump setup``: the plan and what was done; or kforensic.kdump-setup/1."""

    def text(self, result: KdumpSetup, to: Destination) -> str:
        return render_setup(result, False)

    def markdown(self, result: KdumpSetup, to: Destination) -> str:
        return render_setup(result, True)

    def json(self, result: KdumpSetup, to: Destination) -> str:
        return json.dumps(setup_document(result), indent=2, ensure_ascii=False) + "\n"

    def html(self, result: KdumpSetup, to: Destination) -> str:
        from forensics.report.html import markdown_page

        return markdown_page("kforensic kdump setup", render_setup(result, True))
