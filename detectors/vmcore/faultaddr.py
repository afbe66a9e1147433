"""The faulting address (CR2) a dump's log reports, and the log record it is read from.

Apart from :mod:`detectors.vmcore.analysis`, which reads it for the fault analysis, so that
:mod:`detectors.vmcore.findings` cites the very record the address came from (it imports no analysis).
"""

from __future__ import annotations

import re

from forensics.types.vmcore import LogRecord

_FAULT_ADDRESS = re.compile(
    r"(?:NULL pointer dereference, address: |unable to handle page fault for address: |CR2: )([0-9a-f]{8,16})"
)
#: The headers of a page-fault oops: only in its report is the CR2 line the faulting address.
_PAGE_FAULT_HEADER = re.compile(r"BUG: (?:kernel NULL pointer dereference|unable to handle page fault)|#PF: ")
#: Headers of reports that are no page fault: their register dump's CR2 is whatever the last page
#: fault (often a user-space one) left there.
_OTHER_HEADER = re.compile(
    r"general protection fault|kernel BUG at|invalid opcode|stack segment|WARNING: CPU|double fault"
    r"|soft lockup|hard LOCKUP|Kernel panic - not syncing"
)


def fault_address_record(log: tuple[LogRecord, ...]) -> tuple[int, int] | None:
    """The faulting address (CR2) of the last page fault the log reports and the index of the record it is read
    from, None when it reports none.

    The CR2 line of a general protection fault, a BUG or a lockup is not read: those do not set CR2.
    """
    found = None
    page_fault = False
    for index, record in enumerate(log):
        if _PAGE_FAULT_HEADER.search(record.text):
            page_fault = True
        elif _OTHER_HEADER.search(record.text):
            page_fault = False
        m = _FAULT_ADDRESS.search(record.text)
        if m and (page_fault or not m.group(0).startswith("CR2")):
            found = int(m.group(1), 16), index
    return found


#: The address a general protection fault's header guesses from the instruction (arch/x86/kernel/traps.c
#: get_kernel_gp_address(), v5.1+): the kernel's own decoding of the operand, not a CR2 value.
_GP_ADDRESS = re.compile(r"general protection fault, (?:probably for|maybe for) non-canonical address 0x([0-9a-f]+)")
_CR2 = re.compile(r"CR2: ([0-9a-f]{8,16})")


def no_fault_address(log: tuple[LogRecord, ...]) -> tuple[str, int | None]:
    """Why the log gives no faulting address, for the fault analysis's step, and the address the crash's report
    guesses instead (a general protection fault's non-canonical address), None when it guesses none.

    Read when :func:`fault_address_record` finds none: a general protection fault sets no CR2, so the ``CR2:`` its
    register dump shows is whatever an earlier page fault (often a user-space one) left there, not a missing line.
    """
    header: str | None = None
    stale: str | None = None
    guessed: int | None = None
    for record in log:
        if _PAGE_FAULT_HEADER.search(record.text) or _OTHER_HEADER.search(record.text):
            gp = _GP_ADDRESS.search(record.text)
            header = "general protection fault" if "general protection fault" in record.text else None
            stale, guessed = None, (int(gp.group(1), 16) if gp else None)
        elif header is not None and (m := _CR2.search(record.text)):
            stale = m.group(1)
    if header is None:
        return "not in the log", None
    shown = f" (the CR2: {stale} its register dump shows is an earlier page fault's)" if stale else ""
    return f"none: a {header} sets no CR2{shown}", guessed
