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
