"""Several trace-cmd buffers recording the same events, recorded for real in private tracefs instances and read by
``kforensic trace``: ``trace-cmd report`` merges them into one stream (an instance's lines prefixed with its name),
so each event is read twice; the report says so."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

TRACEFS = Path("/sys/kernel/tracing")

pytestmark = [
    pytest.mark.live,
    pytest.mark.skipif(shutil.which("trace-cmd") is None, reason="trace-cmd is not installed"),
    pytest.mark.skipif(
        os.geteuid() != 0 or not (TRACEFS / "instances").is_dir(), reason="needs root and tracefs instances"
    ),
]


def _record(dat: Path, names: tuple[str, ...]) -> None:
    """``dat``: the instances ``names`` each recording sched_switch and sched_wakeup over a short busy spell; the
    instances are removed whatever happens."""
    made: list[Path] = []
    try:
        for name in names:
            inst = TRACEFS / "instances" / name
            inst.mkdir()
            made.append(inst)
            (inst / "tracing_on").write_text("0")
            for event in ("sched/sched_switch", "sched/sched_wakeup"):
                (inst / "events" / event / "enable").write_text("1")
        for inst in made:
            (inst / "tracing_on").write_text("1")
        for _ in range(5):
            subprocess.run([sys.executable, "-c", "sum(range(100000))"], check=True)
            time.sleep(0.01)
        for inst in made:
            (inst / "tracing_on").write_text("0")
        buffers = [arg for name in names for arg in ("-B", name)]
        subprocess.run(["trace-cmd", "extract", *buffers, "-o", str(dat)], check=True, capture_output=True)
    finally:
        for inst in made:
            if inst.is_dir():
                (inst / "tracing_on").write_text("0")
                inst.rmdir()


@pytest.mark.parametrize("count", [2, 1])
def test_recorded_buffers_of_the_same_events_are_said_to_be_read_twice(tmp_path: Path, count: int) -> None:
    """Two instances recording the same events: the coverage line names both and the events they share (before,
    nothing was said and every event was counted twice); one instance alone: nothing said."""
    names = tuple(f"kforensic_buf_{os.getpid()}_{i}" for i in range(count))
    dat = tmp_path / "buffers.dat"
    _record(dat, names)
    out = subprocess.run(
        [str(Path(sys.executable).with_name("kforensic")), "trace", str(dat), "-f", "json"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert out.returncode in (0, 1), out.stderr
    said = f"2 trace-cmd buffers (record -B: '{names[0]}', '{names[-1]}') record the same events (sched_switch, "
    note = json.loads(out.stdout)["coverage"]["note"]
    assert (said in note) == (count == 2), note
