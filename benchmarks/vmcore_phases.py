"""Where the CPU time of one ``kforensic vmcore`` run goes: run as the command would be, print JSON.

    python benchmarks/vmcore_phases.py DUMP --vmlinux V [...the vmcore options]

Wraps the pipeline's stages (no change to what they do) and prints, in CPU seconds of this
process (all threads): drgn opening the dump and indexing the DWARF of vmlinux and modules
(``open_dump``), kforensic's check of every compressed page (``check_pages``), kforensic's reads
through drgn (``collect_snapshot``: tasks, stacks, the log, slabs, locks), kforensic's analyses (the
detectors and the log scanner), and the rest (interpreter start-up, imports, rendering, writing).
benchmarks/vmcore_speed.py runs it for the breakdown it prints.
"""

from __future__ import annotations

import functools
import importlib
import json
import resource
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

SPANS = {
    "drgn: open dump, index DWARF": ("forensics.vmcore.program", "open_dump"),
    "kforensic: page check": ("forensics.vmcore.dumpfile", "check_pages"),
    "kforensic: reads through drgn": ("forensics.vmcore.collect", "collect_snapshot"),
    "kforensic: analyses": ("detectors.vmcore.analysis", "analyse_snapshot"),
    "kforensic: log scan": ("detectors.dmesg.scanner", "scan_text"),
}


def _timed(spent: dict[str, float], name: str, function: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(function)
    def run(*args: Any, **kwargs: Any) -> Any:
        started = time.process_time()
        try:
            return function(*args, **kwargs)
        finally:
            spent[name] = spent.get(name, 0.0) + time.process_time() - started

    return run


def main() -> None:
    """Run ``kforensic vmcore ARGS`` with the stages timed; print the JSON breakdown on stderr's last line."""
    from forensics.vmcore.lazyhelpers import defer_linux_helpers

    defer_linux_helpers()  # as extract_dump does before its first helper import (the wrapping imports them here)
    spent: dict[str, float] = {}
    for name, (module_name, attribute) in SPANS.items():
        # Wrapping imports these modules before the run does (their import time moves out of the rest).
        module = importlib.import_module(module_name)
        setattr(module, attribute, _timed(spent, name, getattr(module, attribute)))
    from forensics.cli import main as cli

    sys.argv = ["kforensic", "vmcore", *sys.argv[1:]]
    code: object = 0
    try:
        cli()
    except SystemExit as exc:
        code = exc.code
    usage = resource.getrusage(resource.RUSAGE_SELF)
    total = usage.ru_utime + usage.ru_stime  # from the process's start: interpreter start-up included
    spent["rest: start-up, imports, rendering"] = total - sum(spent.values())
    print(json.dumps({"exit": code, "cpu": total, "spans": spent}), file=sys.stderr)


if __name__ == "__main__":
    main()
