"""Compile every kernel of ``kforensic trace`` into the cache once: ``python -m forensics.pipelines.build``.

numba's JIT cache for every kernel, and the LTTng decoder, the ftrace text scanner and the engine compiled
ahead of time (:mod:`forensics.aot`: loaded without numba); ``kforensic dmesg``'s modules compiled to C by mypyc
(:mod:`forensics.native`).

What an install or ``make compile`` runs so that the first large trace does
not wait for the compile (small traces never do: they run without compiled
code, see :func:`forensics.jit.compiled_pays`).  Each compile is announced on
stderr with its expected time; kernels already in the cache load silently.
"""

from __future__ import annotations

import sys
import time

from forensics.jit import cache_dir

# Two CPUs, every event kind the engine handles, a lost-events marker: each kernel runs once.
SAMPLE = b"""\
 kworker/0:1-10    [000] d..2.   100.000100: sched_switch: prev_comm=kworker/0:1 prev_pid=10 prev_prio=120 \
prev_state=S ==> next_comm=sh next_pid=20 next_prio=120
          sh-20    [001] d..3.   100.000200: sched_waking: comm=kworker/0:1 pid=10 prio=120 target_cpu=000
          sh-20    [000] d.h1.   100.000300: irq_handler_entry: irq=16 name=eth0
          sh-20    [000] d.h1.   100.000400: irq_handler_exit: irq=16 ret=handled
CPU:1 [LOST 3 EVENTS]
          sh-20    [000] d..2.   100.000500: sched_switch: prev_comm=sh prev_pid=20 prev_prio=120 prev_state=R \
==> next_comm=kworker/0:1 next_pid=10 next_prio=120
"""

#: Two samples of ``perf script`` with their call chains, one a kernel frame, one a program's: the chunk pass runs.
PERF_SAMPLE = (
    b"sh 20 [000] 100.000100: 1 cpu-clock:ppp: \n\tffffffff81000000 do_syscall_64+0x1f ([kernel.kallsyms])\n\n"
    b"sh 20 [001] 100.000200: 1 cpu-clock:ppp: \n\t7f0000001000 main+0x10 (/usr/bin/sh)\n"
    b"\t7f0000002000 __libc_start_main+0x80 (/usr/lib/libc.so.6)\n\n"
)


def build() -> float:
    """Compile (or load) the trace kernels by running them on :data:`SAMPLE`; the seconds it took."""
    from collectors.ctf.decode import warm_up
    from collectors.trace_columns import BatchParser
    from detectors.sched.engine import FastAnalyzer

    start = time.perf_counter()
    warm_up()  # the LTTng (CTF) decoder
    parser = BatchParser(compiled=True)
    analyzer = FastAnalyzer()
    analyzer.feed(parser.feed_batch(SAMPLE))
    analyzer.feed(parser.finish_batch())
    analyzer.result(parser.counts)
    return time.perf_counter() - start


def build_part(part: str) -> None:
    """One of :func:`build`'s three compiles alone: ``ctf`` (the LTTng decoder), ``scanner`` (the ftrace text
    scanner) or ``engine`` (the scheduling analysis, fed by the plain scanner: the same batches); or ``perf``, numba's
    JIT of the profile reader's chunk pass (:func:`collectors.perf_chains_aot.jitted_scan`: the JIT path of a call
    that the module built ahead of time does not take, and what :func:`build_ahead` compiles its callees from).

    ``make test`` runs the four side by side, beside mypy: one process compiles on one core.  Its tests read profiles
    through the JIT chunk pass: on a fresh clone each pytest-xdist worker compiled it (~9 s of CPU each) otherwise.
    """
    if part not in ("ctf", "scanner", "engine", "perf"):
        raise ValueError(f"no part {part!r} (ctf, scanner, engine, perf)")
    if part == "perf":
        from collectors.perf_chains_aot import jitted_scan
        from collectors.perf_script import ScriptParser

        reader = ScriptParser("build", bulk=True, scanner=jitted_scan())
        reader.feed(PERF_SAMPLE)
        reader.close()
        return
    if part == "ctf":
        from collectors.ctf.decode import warm_up

        warm_up()
        return
    from collectors.trace_columns import BatchParser

    parser = BatchParser(compiled=part == "scanner")
    batches = [parser.feed_batch(SAMPLE), parser.finish_batch()]
    if part == "engine":
        from detectors.sched.engine import FastAnalyzer

        analyzer = FastAnalyzer()
        for batch in batches:
            analyzer.feed(batch)
        analyzer.result(parser.counts)


def build_ahead() -> float:
    """Build the LTTng decoder, the ftrace text scanner and the engine ahead of time (:mod:`forensics.aot`) unless
    built; the seconds it took.

    What lets ``kforensic trace`` on an LTTng session or a text trace run without numba loaded
    (docs/measurements/trace.md, "Peak RSS").
    """
    from collectors import perf_chains_aot, trace_scan_aot
    from collectors.ctf import decode_aot
    from detectors.sched import engine_aot

    start = time.perf_counter()
    decode_aot.kernels(build=True)
    trace_scan_aot.kernels(build=True)
    engine_aot.kernels(build=True)
    perf_chains_aot.chunk_kernel(build=True)  # the profile reader's chunk pass
    return time.perf_counter() - start


def build_native() -> float:
    """Compile ``kforensic dmesg``'s scanner, line parser, report builder and reader, and its JSON document's items, to
    C (:mod:`forensics.native`, mypyc) unless built; the seconds it took.  What makes a report-dense log's triage
    ~13% cheaper (docs/dmesg.md).
    """
    import detectors.dmesg
    from forensics import native

    start = time.perf_counter()
    native.build(detectors.dmesg.NATIVE)
    native.build(native.DMESG_DOCUMENT)
    return time.perf_counter() - start


def main() -> None:
    """Build, and say where the code is cached."""
    seconds = build() + build_ahead() + build_native()
    print(f"kforensic: compiled code ready in {cache_dir()} ({seconds:.1f} s)", file=sys.stderr)


if __name__ == "__main__":
    main()
