"""Binary inputs recognised by their magic bytes, and the command that reads each.

A kernel log is text. A file that starts with another format's signature (a
perf.data recording, a dump, a trace-cmd trace.dat, a slab store) was given to
the wrong command: reading it as text would find nothing and say so, which is
an answer without the power to find anything. Such an input is refused in one
line that names what the file is and which command reads it.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class BinaryFormat:
    """A file format known by its first bytes."""

    magic: bytes
    what: str
    reader: str  # the kforensic command line that reads it


#: Specific to generic; each magic is the format's documented file signature.
BINARY_FORMATS: tuple[BinaryFormat, ...] = (
    BinaryFormat(b"PERFILE2", "a perf.data recording", "kforensic profile FILE"),
    BinaryFormat(b"\x17\x08Dtracing", "a trace-cmd trace.dat recording", "kforensic trace FILE"),
    BinaryFormat(b"\xc1\x1f\xfc\xc1", "a CTF (LTTng) stream file", "kforensic trace TRACE_DIR"),
    BinaryFormat(b"\x75\x57\x1f\x75", "packetized CTF (LTTng) metadata", "kforensic trace TRACE_DIR"),
    BinaryFormat(b"KDUMP   ", "a kdump-compressed crash dump", "kforensic vmcore FILE"),
    BinaryFormat(b"makedumpfile", "a flattened makedumpfile crash dump", "kforensic vmcore FILE"),
    BinaryFormat(b"SQLite format 3\x00", "a SQLite database (a slab store?)", "kforensic leaks --store FILE"),
    BinaryFormat(b"\x7fELF", "an ELF file (a crash dump, vmlinux or module)", "kforensic vmcore DUMP --vmlinux FILE"),
)


def binary_format(head: bytes) -> BinaryFormat | None:
    """The binary format ``head`` (a file's first bytes) starts with, or None for anything else."""
    return next((f for f in BINARY_FORMATS if head.startswith(f.magic)), None)
