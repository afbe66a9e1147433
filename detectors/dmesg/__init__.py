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
    ),
    seconds=120.0,
    what="the kernel log's scanner, line parser, report builder and reader",
    # what they import, directly or not, of the project's other modules (checked by test_native.py)
    reads=(
        "detectors.dmesg.atomic",
        "detectors.dmesg.cpublocks",
        "detectors.dmesg.interleaved",
        "detectors.dmesg.model",
        "detectors.dmesg.rcuusage",
        "detectors.dmesg.repeat",
        "detectors.dmesg.rules",
        "detectors.dmesg.spindebug",
        "detectors.dmesg.taint",
        "detectors.dmesg.ubsan",
        "detectors.dmesg.waitcontext",
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
