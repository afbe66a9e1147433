"""dmesg triage: find every kernel report in a log, classify and title it, name the guilty frame.

The engine is pure: it takes the log as bytes (any chunking) and returns
:class:`~detectors.dmesg.model.KernelReport` records in log order
(:func:`~detectors.dmesg.scanner.scan_chunks`).  :mod:`detectors.dmesg.findings`
groups repeated reports and turns them into findings with evidence.  Reading
files, standard input and ``/dev/kmsg`` is the job of
:mod:`collectors.kernel_log`.
"""

from forensics import native

#: The scanner, the line parser, the report builder, the reading of a report and the grouping compiled to C when built
#: (``make compile``; see :mod:`forensics.native`): installed before any module of the package is imported.
#: The report memo too; not the repeats it makes (repeat.py: mypyc cannot compile ``_Repeat``'s ``__getattr__``).
#: And what the findings read of a log's reports after them: the taint's die counter, the interleaved dumps, the
#: aftermath of a critical report, the links of an oops tainted D and of an interrupted report (Python loops over
#: every kept report: ~120 M instructions of the corpus x4 as source; docs/measurements/dmesg.md, 28th part).
NATIVE = native.Group(
    name="kforensic_dmesg",
    modules=(
        "detectors.dmesg.lines",
        "detectors.dmesg.memo",
        "detectors.dmesg.extract",
        "detectors.dmesg.frames",
        "detectors.dmesg.stacks",
        "detectors.dmesg.scanner",
        "detectors.dmesg.why",
        "detectors.dmesg.code",
        "detectors.dmesg.findings",
        "detectors.dmesg.events",
        "detectors.dmesg.taint",
        "detectors.dmesg.interleaved",
        "detectors.dmesg.aftermath",
        "detectors.dmesg.afteroops",
        "detectors.dmesg.interrupted",
    ),
    seconds=120.0,
    what="the kernel log's scanner, line parser, report builder and reader",
    # what they import, directly or not, of the project's other modules (checked by test_native.py)
    reads=(
        "detectors.dmesg.atomic",
        "detectors.dmesg.cpublocks",
        "detectors.dmesg.model",
        "detectors.dmesg.rcuusage",
        "detectors.dmesg.repeat",
        "detectors.dmesg.rules",
        "detectors.dmesg.spindebug",
        "detectors.dmesg.ubsan",
        "detectors.dmesg.waitcontext",
        "detectors.incident.consequences",
        "detectors.pointers",
        "detectors.vmcore.disasm",
        "forensics.errors",
        "forensics.model",
        "forensics.quoting",
        "forensics.regexcache",
        "forensics.runcache",
        "forensics.types.causes",
        "forensics.types.deliberate",
        "forensics.types.dmesg",
        "forensics.types.log_prefix",
        "forensics.types.registers",
        "forensics.units",
        "forensics.userdirs",
    ),
)
native.install(NATIVE)
