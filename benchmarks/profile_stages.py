"""Where the CPU of ``kforensic profile FILE --svg --folded -o`` (or ``--folded -``) goes, stage by stage; the floors.

Each run is a fresh process running the command itself (``forensics.cli.main``), with timers wrapped around
the functions it calls: start-up (the interpreter and the CLI's imports, up to the command), the reader's chunk
pass (reading, hashing, masking, slots, the new sample texts) and its closing (the call chains, the stacks),
the stack table, the hotspot tables, the rule classes, the findings, the folded lines, the flame graph and the
report; the imports each stage makes on first use count in it (numpy in the chunk pass).  The floors, each a
fresh process too: the interpreter alone, ``import numpy``, ``kforensic profile`` of a 506-sample recording
(everything but the volume), the input layer imported, then reading and hashing the input as it does; and
``stackcollapse-perf.pl`` on the same input, for the ratio.  Medians of --repeat runs (CPU seconds of the
process: user + system), alternated, with the load average before and after.

Run: .venv/bin/python benchmarks/profile_stages.py --input /tmp/fresh.perf.txt [--repeat 5] [--folded-only]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from itertools import pairwise
from pathlib import Path
from statistics import median

from machine import machine_line

ROOT = Path(__file__).resolve().parent.parent
PERL = ROOT.parent / "shared" / "tools" / "flamegraph" / "stackcollapse-perf.pl"

# The stages, in the order the command runs them: (label, module, function).
STAGES = (
    ("reader: closing (call chains, stacks)", "collectors.perf_script", "ScriptParser.close"),
    ("reader: everything (chunk pass = this minus closing)", "collectors.perf_script", "read_profile"),
    ("stack table (chains and threads numbered)", "forensics.types.profile", "stack_table"),
    ("hotspot tables", "detectors.profile.hotspots", "compute_hotspots"),
    ("rule classes", "detectors.profile.findings", "class_shares"),
    ("findings", "detectors.profile.findings", "profile_findings"),
    ("folded lines", "detectors.profile.hotspots", "folded_lines"),
    ("flame graph SVG", "forensics.report.profile", "render_flamegraph"),
    ("text report", "forensics.report.formats", "render"),
)
#: Modules a folded-only run (``--folded -``) never imports.
FOLDED_SKIPS = ("detectors.profile.findings", "forensics.report.profile", "forensics.report.formats")
#: Parts of the stages above, printed with them but not counted again in "the rest".
PARTS = (
    (
        "  of the chunk pass: the compiled scan (the kernel, its tables grown)",
        "collectors.perf_chunks",
        "ChunkSlots.scan",
    ),
    ("  of the chunk pass: the new texts' headers and slots", "collectors.perf_script", "ScriptParser._fast_new"),
    (
        "  of the closing: the counters grouped (slots by thread, event, text; not with --folded - alone)",
        "collectors.perf_script",
        "ScriptParser._fast_grouped",
    ),
    (
        "  of the closing: the folded sums of the slots' numbers (--folded - alone)",
        "collectors.perf_script",
        "ScriptParser._pending_folded",
    ),
    ("  of the closing: the keys parsed, the chains made", "collectors.perf_chunks", "Bodies.frames"),
    ("  of the folded lines: sums per command and chain", "forensics.types.profile", "periods_by_command"),
)


def _child(argv: list[str]) -> None:
    """Run the command with timers around its stages; print them as JSON on stderr's last line."""
    import importlib

    import forensics.cli

    # CPU time counts from the process's start: the interpreter's and this script's few imports are in it.
    spent = {"start-up (interpreter, CLI imports)": time.process_time()}
    # numpy apart (the wrapped chunk pass's module imports it here, not in the chunk pass as a run does).
    t = time.process_time()
    import numpy  # noqa: F401

    spent["numpy's import (a run: in the chunk pass)"] = time.process_time() - t

    def wrap(label: str, owner: object, name: str) -> None:
        inner = getattr(owner, name)

        def timed(*args: object, **kwargs: object) -> object:
            t = time.process_time()
            try:
                return inner(*args, **kwargs)
            finally:
                spent[label] = spent.get(label, 0.0) + time.process_time() - t

        setattr(owner, name, timed)

    # The command imports its modules when it runs (their import time is "the rest"), and binds the report's
    # functions then: wrapped here first, where they are defined.
    folded_only = any(pair == ("--folded", "-") for pair in pairwise(argv))
    for label, module, name in STAGES + PARTS:
        if folded_only and module in FOLDED_SKIPS:
            continue  # not imported by a folded-only run: importing them here would count in "the rest"
        owner: object = importlib.import_module(module)
        *path, attr = name.split(".")
        for part in path:
            owner = getattr(owner, part)
        wrap(label, owner, attr)
    sys.argv = ["kforensic", *argv]
    try:
        forensics.cli.main()
    except SystemExit:
        pass
    finally:
        spent["total"] = time.process_time()
        print(json.dumps(spent), file=sys.stderr)


def _cpu(argv: list[str], env: dict[str, str]) -> tuple[float, str]:
    """CPU seconds of a child (wait4) and its stderr."""
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env, cwd=ROOT)
    assert proc.stderr is not None
    err = proc.stderr.read().decode("utf-8", "replace")
    _, _, usage = os.wait4(proc.pid, 0)
    return usage.ru_utime + usage.ru_stime, err


def main() -> None:
    """Run the stages and the floors alternately; print medians."""
    if len(sys.argv) > 1 and sys.argv[1] == "--child":
        _child(sys.argv[2:])
        return
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument(
        "--input", type=Path, required=True, help="perf script text (e.g. benchmarks/record_varied_profile.py's)"
    )
    ap.add_argument("--repeat", type=int, default=5, help="runs of each, alternated; the medians count")
    ap.add_argument("--stackcollapse", type=Path, default=PERL, help="path of stackcollapse-perf.pl")
    ap.add_argument(
        "--folded-only", action="store_true", help="run `kforensic profile FILE --folded -` (what the Perl script does)"
    )
    args = ap.parse_args()
    print(machine_line(), flush=True)  # the page cost: what makes this VM's figures vary (machine.py)
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env["PYTHONPATH"] = str(ROOT)  # this tree's code, whichever tree the interpreter's install points at
    out = Path(os.environ.get("TMPDIR", "/tmp")) / f"profile-stages-{os.getpid()}"
    out.mkdir(exist_ok=True)
    py = sys.executable
    small = ROOT / "tests" / "data" / "profile" / "mixed.perf.txt.gz"
    outputs = (
        ["--folded", "-"]
        if args.folded_only
        else ["--svg", str(out / "s.svg"), "--folded", str(out / "f"), "-o", str(out / "t")]
    )
    read = (
        "from collectors.inputs import open_input\n"
        "with open_input({!r}) as t:\n    for c in t.read_chunks(512 << 10): pass\n    t.record()"
    )
    floors = {
        "interpreter alone (python -c pass)": [py, "-c", "pass"],
        "python -c 'import numpy'": [py, "-c", "import numpy"],
        f"kforensic profile {small.name} (506 samples), the same outputs": [
            py,
            "-m",
            "forensics",
            "profile",
            str(small),
            *outputs,
        ],
        "python -c 'import collectors.inputs' (the input layer)": [py, "-c", "import collectors.inputs"],
        f"the same, then reading and hashing {args.input.name} (512 KiB chunks)": [
            py,
            "-c",
            read.format(str(args.input)),
        ],
    }
    if args.stackcollapse.exists():
        floors[f"stackcollapse-perf.pl {args.input.name}"] = ["perl", str(args.stackcollapse), str(args.input)]
    stages: list[dict[str, float]] = []
    floor_runs: dict[str, list[float]] = {k: [] for k in floors}
    load0 = os.getloadavg()
    for _ in range(args.repeat):
        _, err = _cpu([py, __file__, "--child", "profile", str(args.input), *outputs], env)
        stages.append(json.loads(err.strip().splitlines()[-1]))
        for label, argv in floors.items():
            floor_runs[label].append(_cpu(argv, env)[0])
    load1 = os.getloadavg()
    print(f"kforensic profile {args.input} {' '.join(outputs)}: CPU seconds per stage, medians of {args.repeat} runs")
    labels = list(stages[0])
    for label in labels:
        values = [s.get(label, 0.0) for s in stages]
        print(f"  {median(values):6.3f} s  ({min(values):.3f}-{max(values):.3f})  {label}")
    closing, everything = STAGES[0][0], STAGES[1][0]
    chunk = [s[everything] - s[closing] for s in stages]
    print(
        f"  {median(chunk):6.3f} s  ({min(chunk):.3f}-{max(chunk):.3f})  "
        "reader: chunk pass (read, hash, new texts; numpy apart)"
    )
    # What no stage holds: the command's own imports on first use, option parsing, writing the files.
    parts = {label for label, _, _ in PARTS}
    rest = [s["total"] - sum(v for k, v in s.items() if k not in ("total", closing, *parts)) for s in stages]
    print(f"  {median(rest):6.3f} s  ({min(rest):.3f}-{max(rest):.3f})  the rest (imports on first use, writing files)")
    print("floors (fresh processes, CPU seconds):")
    for label, values in floor_runs.items():
        print(f"  {median(values):6.3f} s  ({min(values):.3f}-{max(values):.3f})  {label}")
    before, after = (" ".join(f"{x:.1f}" for x in load) for load in (load0, load1))
    print(f"load average (1, 5, 15 min) before: {before}, after: {after}")


if __name__ == "__main__":
    main()
