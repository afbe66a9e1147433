"""dmesg triage: find every kernel report in a log, classify and title it, name the guilty frame.

The engine is pure: it takes the log as bytes (any chunking) and returns
:class:`~detectors.dmesg.model.KernelReport` records in log order
(:func:`~detectors.dmesg.scanner.scan_chunks`).  :mod:`detectors.dmesg.findings`
groups repeated reports and turns them into findings with evidence.  Reading
files, standard input and ``/dev/kmsg`` is the job of
:mod:`collectors.kernel_log`.
"""
