"""Log lines that use "entry"/"exit" (or "start"/"end") for something else are no request span (a user-eyes
review: "cache entry ..." / "cache exit ..." trace_marker lines were paired into one).  A real ftrace recording
made here: an instance of its own, sched events on, the lines written to its ``trace_marker`` by a process that
sleeps between them; ``kforensic trace --slow-ms 0`` pairs its marks."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.helpers import Ran, cli_run

TRACEFS = Path("/sys/kernel/tracing")

# (text, what it is): the unrelated lines first, each an old false pair, then the real pairs
LINES = (
    "cache entry 42",  # a cache entry, then the cache's shutdown: old rules paired them (the end had no id)
    "cache exit",
    "cache entry: miss",  # the same with a word for an id
    "cache exit",
    "table entry",  # bare nouns
    "table exit",
    "queue entry 7",  # an entry word closed by an end word: two different pairs
    "queue end 7",
    "req start 12",  # real: start/end with one id
    "req end 12",
    "frame begin",  # real: begin/end, no id
    "frame end",
    "syscall entry 5",  # real: entry/exit with one id
    "syscall exit 5",
    "job start abc",  # an id without a digit: no span, but said, with the --span that pairs it
    "job end abc",
)


@pytest.fixture
def kf(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> Callable[..., Ran]:
    def invoke(*args: str | Path) -> Ran:
        return cli_run(monkeypatch, capsys, *args)

    return invoke


def _record(tmp: Path) -> Path:
    """The lines written 2 ms apart to a private instance's trace_marker, with its sched events: its text."""
    inst = TRACEFS / "instances" / f"kforensic_marks_{os.getpid()}"
    inst.mkdir()
    try:
        for event in ("sched_switch", "sched_wakeup", "sched_waking"):
            (inst / "events/sched" / event / "enable").write_text("1")
        (inst / "tracing_on").write_text("1")
        writer = (
            "import sys, time\n"
            "with open(sys.argv[1], 'w') as f:\n"
            "    for line in sys.argv[2:]:\n"
            "        f.write(line); f.flush(); time.sleep(0.002)\n"
        )
        subprocess.run([sys.executable, "-c", writer, str(inst / "trace_marker"), *LINES], check=True, timeout=60)
        (inst / "tracing_on").write_text("0")
        out = tmp / "marks.ftrace.txt"
        out.write_text((inst / "trace").read_text())
    finally:
        if inst.exists():
            inst.rmdir()
    return out


@pytest.mark.live
@pytest.mark.skipif(os.geteuid() != 0 or not (TRACEFS / "instances").is_dir(), reason="needs root and tracefs")
def test_entry_and_exit_used_for_other_things_make_no_span_real_pairs_still_do(
    tmp_path: Path, kf: Callable[..., Ran]
) -> None:
    path = _record(tmp_path)
    text = path.read_text()
    assert all(f"tracing_mark_write: {line}\n" in text for line in LINES), text[-2000:]  # all were recorded
    ran = kf("trace", path, "--slow-ms", "0", "--format", "json")
    assert ran.returncode in (0, 1), ran.stderr
    stats = {s["name"]: s["count"] for s in json.loads(ran.stdout)["spans"]["stats"]}
    # one span each of the real pairs; none of cache, table or queue (before: cache 2, table 1, queue 1)
    assert {k: v for k, v in stats.items() if v} == {"req": 1, "frame": 1, "syscall": 1}, stats
    # The lines whose id has no digit made no span silently (review ue16): the span notes say so and how to pair
    # them ("cache entry: miss" reads the same way, and is counted; job, read opening and closing, is the example)
    notes = json.loads(ran.stdout)["spans"]["notes"]
    [said] = [n for n in notes if "their id has no digit" in n]
    assert said.startswith("3 mark(s) that read as a span's start or end made no span: their id has no digit (e.g. ")
    hint = "--span 'job=job start {id}..job end {id}'"
    assert "(e.g. 'job start abc'; " in said and said.endswith(f"if they are edges, pair them with {hint}"), said
    text = kf("trace", path, "--slow-ms", "0")
    assert "note: 3 mark(s) that read as a span's start or end made no span: their id has no digit" in text.stdout
    # the --span it names pairs what it names; with --span no such note
    again = kf("trace", path, "--slow-ms", "0", "--span", hint.split("'")[1], "--format", "json")
    doc = json.loads(again.stdout)["spans"]
    assert {s["name"]: s["count"] for s in doc["stats"]} == {"job": 1}
    assert not [n for n in doc["notes"] if "their id has no digit" in n]
