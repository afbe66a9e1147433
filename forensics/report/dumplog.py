"""``kforensic vmcore`` without debug info rendered: what was read and why only that, then ``kforensic dmesg``'s
report of the dump's kernel log (its table, why, hypotheses and incident), or the ``kforensic.vmcore/1`` document
whose ``analysis`` is ``{"not_available": ...}``."""

from __future__ import annotations

from typing import Any

from forensics.report.document import Block, BulletList, Document, Paragraph, Section
from forensics.report.formats import Destination
from forensics.report.markdown import md_escape
from forensics.types.results import NEEDS_DEBUG_INFO, DumpLogResult, LogBeside

TITLE = "kforensic vmcore: the dump's kernel log only"


def _log_sha256(result: DumpLogResult) -> str | None:
    """The sha256 of the log read (its source record's), when it was hashed."""
    digest = result.dmesg.sources[0].record.sha256 if result.dmesg.sources else None
    return digest if isinstance(digest, str) else None


def _log_text(result: DumpLogResult) -> str:
    """Where the log came from and how the findings' citations read, one sentence (markdown inline code, which
    reads as it is in a terminal too)."""
    log = result.log
    if isinstance(log, LogBeside):
        if log.unchecked:
            return (
                f"`{log.path}`, found beside the dump, not checked against it ({log.unchecked}): the findings cite "
                "its lines"
            )
        return f"`{log.path}`, beside the dump and checked to be its log ({log.checked}): the findings cite its lines"
    digest = _log_sha256(result)
    return (
        f"extracted from the dump by makedumpfile for this run; `{log.shell}` writes it again"
        + (f" (sha256 {digest})" if digest else "")
        + f": a citation `{log.cited} line N` is line N of FILE"
        + (f" ({log.not_used})" if log.not_used else "")
    )


def preamble_text(result: DumpLogResult) -> list[str]:
    """The top of the terminal report: only the log was read, why, what is unknown and how to get it."""
    return [
        "Only the dump's kernel log was read: the kernel's debug info was not found.",
        f"  dump: {result.dump}",
        f"  why: {result.analysis.reason}",
        f"  the dump's own state ({NEEDS_DEBUG_INFO}): unknown (no debug info: {result.full_analysis})",
        f"  kernel log: {_log_text(result)}",
        *(f"  note: {w}" for w in result.warnings),
        "",
    ]


def preamble_section(result: DumpLogResult) -> Section:
    """The same as a document section (markdown, HTML, and ``report``'s details)."""
    items = (
        f"dump: `{md_escape(result.dump)}`",
        f"why: {md_escape(result.analysis.reason)}",
        f"the dump's own state ({NEEDS_DEBUG_INFO}): unknown (no debug info: {md_escape(result.full_analysis)})",
        f"kernel log: {_log_text(result)}",
        *(f"note: {md_escape(w)}" for w in result.warnings),
    )
    return Section(
        "Only the dump's kernel log was read",
        (Paragraph("The kernel's debug info was not found."), BulletList(items)),
    )


def dumplog_document(result: DumpLogResult) -> Document:
    """The preamble, then ``kforensic dmesg``'s sections of the log (reports, why, hypotheses)."""
    from forensics.report.dmesg import dmesg_sections

    blocks: tuple[Block, ...] = (
        preamble_section(result),
        *dmesg_sections(list(result.dmesg.sources), result.dmesg.hypotheses),
    )
    return Document(TITLE, blocks)


def to_document(result: DumpLogResult) -> dict[str, Any]:
    """The ``kforensic.vmcore/1`` document of a dump read without debug info.

    ``analysis`` is ``{"not_available": why}`` (where the full document has ``summary``, ``backtrace``, ...),
    ``full_analysis`` how to get it; ``kernel_log`` where the log came from and its reports as ``kforensic.dmesg/1``
    lists them (``sources``); ``hypotheses`` and ``incident`` as ``kforensic dmesg`` gives them for that log.
    """
    from forensics.report.dmesg import to_document as dmesg_document
    from forensics.report.vmcore import VMCORE_SCHEMA

    dmesg = dmesg_document(list(result.dmesg.sources), result.dmesg.incident, result.dmesg.hypotheses)
    log = result.log
    origin: dict[str, Any] = (
        {"beside_the_dump": log.path, "checked": log.checked or None, "unchecked": log.unchecked or None}
        if isinstance(log, LogBeside)
        else {"extracted_by": list(log.command), "cited_as": log.cited, "not_used": log.not_used or None}
    )
    return {
        "schema": VMCORE_SCHEMA,
        "dump": {"path": result.dump, "dmesg": log.path if isinstance(log, LogBeside) else None},
        "analysis": {"not_available": result.analysis.reason},
        "full_analysis": result.full_analysis,
        "kernel_log": {**origin, "sha256": _log_sha256(result), "sources": dmesg["sources"]},
        "hypotheses": dmesg["hypotheses"],
        "warnings": list(result.warnings),
        "incident": dmesg["incident"],
    }


class DumpLogRenderer:
    """``kforensic vmcore`` on a dump without debug info: the preamble, then the log as ``kforensic dmesg`` shows it."""

    def text(self, result: DumpLogResult, to: Destination) -> str:
        from forensics.report.dmesg import DmesgRenderer

        return "\n".join(preamble_text(result)) + "\n" + DmesgRenderer().text(result.dmesg, to)

    def markdown(self, result: DumpLogResult, to: Destination) -> str:
        from forensics.report.document import to_markdown
        from forensics.report.markdown import render_markdown

        return to_markdown(dumplog_document(result)) + "\n" + render_markdown(result.incident)

    def json(self, result: DumpLogResult, to: Destination) -> str:
        import json

        return json.dumps(to_document(result), indent=2, ensure_ascii=False) + "\n"

    def html(self, result: DumpLogResult, to: Destination) -> str:
        from forensics.report.html import document_page

        return document_page(dumplog_document(result), result.incident)
