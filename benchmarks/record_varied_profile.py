"""Record a fresh whole-machine profile with many distinct stacks: the hard case of ``profile_throughput.py``.

Repeating one recording (``profile_throughput.py`` without --input) repeats its stacks, so most samples
are ones the reader has seen; a real incident recording of a busy machine has mostly distinct stacks.
This runs a varied load for --seconds while ``perf record -a -g -F 999`` records the machine:

  - Python: regular expressions, JSON, compression, sorting and hashing on data of random sizes;
  - ``find /usr`` reading every directory and hashing small files (VFS, page cache, ext4/overlay paths);
  - ``gcc -O2`` compiling a generated C file of many functions, over and over.

then writes ``perf script`` text of it, cut at the first sample boundary past --mb megabytes
(``profile_throughput.py --input OUT --mb 50`` then repeats it only if it is shorter).  The text is
not kept in git (tens of MB); re-record it to measure.
Run: .venv/bin/python benchmarks/record_varied_profile.py --out /tmp/fresh.perf.txt [--seconds 75] [--mb 50]
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

_PYTHON_LOAD = textwrap.dedent(
    """
    import bz2, hashlib, json, lzma, random, re, time, zlib
    rng = random.Random(1)
    end = time.monotonic() + float(__import__("sys").argv[1])
    words = [''.join(rng.choice('abcdefghij') for _ in range(rng.randint(2, 12))) for _ in range(5000)]
    while time.monotonic() < end:
        n = rng.randint(100, 20000)
        doc = {w: [rng.random() for _ in range(rng.randint(0, 5))] for w in rng.sample(words, min(n, 5000))}
        text = json.dumps(doc)
        json.loads(text)
        re.findall(r"[a-e]+[f-j]{2,}", text)
        data = text.encode()
        for codec in (zlib.compress, bz2.compress, lzma.compress)[: rng.randint(1, 3)]:
            codec(data[: rng.randint(1000, len(data))])
        sorted(words, key=lambda w: (len(w), w[::-1]))
        hashlib.sha256(data).hexdigest()
    """
)

_FIND_LOAD = (
    "end=$((SECONDS+{s})); while [ $SECONDS -lt $end ]; do "
    "find /usr -xdev -type f -size -64k -print0 2>/dev/null | head -z -n 4000 | xargs -0 -r sha1sum >/dev/null; "
    "find /usr -xdev -newer /etc/hostname >/dev/null 2>&1; done"
)


def _c_source(functions: int) -> str:
    """A C file of many small functions of varied shape, so the compiler walks many paths."""
    parts = ["#include <string.h>\n#include <stdlib.h>\n"]
    for i in range(functions):
        parts.append(
            f"struct s{i} {{ int a[{i % 7 + 1}]; double d; char name[{i % 13 + 3}]; }};\n"
            f"int f{i}(int x, const char *p) {{ struct s{i} v; memset(&v, 0, sizeof v);"
            f" for (int k = 0; k < x % {i % 5 + 2}; k++) {{ v.a[k % {i % 7 + 1}] += k * {i};"
            f" if (p[k % 3] == '{chr(97 + i % 26)}') v.d += k / 3.0; else v.d -= {i}; }}"
            f" switch (x & 3) {{ case 0: return (int)v.d; case 1: return v.a[0] + (int)strlen(p);"
            f" default: return x > {i} ? f{max(i - 1, 0)}(x - 1, p) : {i}; }} }}\n"
        )
    return "".join(parts)


def main() -> None:
    """Record, print where the text is and how many samples and distinct chains it holds."""
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", type=Path, required=True, help="where to write the perf script text")
    ap.add_argument(
        "--seconds", type=int, default=75, help="length of the recording (default 75: about 50 MB of text on 2 CPUs)"
    )
    ap.add_argument("--mb", type=int, default=50, help="cut the text just past this many MB (default 50)")
    args = ap.parse_args()
    sys.path.insert(0, str(ROOT))
    from collectors.perf_script import find_perf

    perf = find_perf()
    if perf is None:
        sys.exit("perf is not installed")
    with tempfile.TemporaryDirectory(prefix="varied-profile-") as d:
        tmp = Path(d)
        src = tmp / "gen.c"
        src.write_text(_c_source(1500))
        s = args.seconds
        compile_loop = (
            f"end=$((SECONDS+{s + 2})); while [ $SECONDS -lt $end ]; do "
            f"gcc -O2 -c {src} -o {tmp / 'gen.o'} 2>/dev/null; done"
        )
        loads = [
            subprocess.Popen(["nice", "-n", "10", sys.executable, "-c", _PYTHON_LOAD, str(s + 2)]),
            subprocess.Popen(["nice", "-n", "10", "bash", "-c", _FIND_LOAD.format(s=s + 2)]),
            subprocess.Popen(["nice", "-n", "10", "bash", "-c", compile_loop]),
        ]
        data = tmp / "perf.data"
        try:
            subprocess.run(
                [perf, "record", "-q", "-a", "-g", "-F", "999", "-o", str(data), "--", "sleep", str(s)],
                check=True,
                stdout=subprocess.DEVNULL,
            )
        finally:
            for p in loads:
                p.wait()
        text = tmp / "all.txt"
        with text.open("wb") as out:
            subprocess.run([perf, "script", "-i", str(data)], check=True, stdout=out, stderr=subprocess.DEVNULL)
        body = text.read_bytes()
    limit = args.mb * 1_000_000
    cut = body.find(b"\n\n", limit)
    if cut >= 0:  # the first sample boundary at or after --mb MB
        body = body[: cut + 2]
    args.out.write_bytes(body)
    samples = body.split(b"\n\n")
    chains = {s.partition(b"\n")[2] for s in samples}
    threads_chains = {(s.split(b" ", 1)[0], s.partition(b"\n")[2]) for s in samples}
    print(
        f"{args.out}: {len(body) / 1e6:.1f} MB, {len(samples) - 1} samples, {len(chains)} distinct call chains"
        f" ({len(threads_chains)} distinct comm + chain)"
    )


if __name__ == "__main__":
    main()
