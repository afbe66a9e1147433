"""LTTng's sched_switch ``prev_state`` read by the kernel that recorded it (review 4 #18).

Before 4.14 lttng-modules records the raw ``p->state`` (or ``TASK_RUNNING | TASK_STATE_MAX`` when
preempted), whose bits moved from kernel to kernel; from 4.14 the TASK_REPORT bit of the state.  The
expected letters here are written from each kernel's include/linux/sched.h constants, not from the reader.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from collectors.ctf import layouts as ly
from collectors.ctf.reader import Session, kernel_batch
from collectors.ctf.task_state import state_table
from forensics.types.trace import Kind
from tests.collectors.ctf_check import extract_session, with_env

# The kernel's constants (include/linux/sched.h of each release) -> the letter 4.14 reports for that state.
V3_10 = {  # EXIT_ZOMBIE 16, EXIT_DEAD 32, TASK_DEAD 64, TASK_WAKEKILL 128, TASK_WAKING 256, TASK_PARKED 512, MAX 1024
    0: "R",
    1: "S",
    2: "D",
    4: "T",
    8: "t",
    16: "Z",
    32: "X",
    64: "Z",  # a task's last switch-out (4.14 reports its exit_state: a task gone either way)
    128 | 2: "D",  # TASK_KILLABLE
    128 | 4: "T",  # TASK_STOPPED
    128 | 8: "t",  # TASK_TRACED
    256: "R",  # TASK_WAKING: not a state TASK_REPORT keeps
    512: "P",  # a parked kthread (CPU hotplug): blocked, not preempted
    1024: "R",  # TASK_RUNNING | TASK_STATE_MAX: preempted
}
V3_8 = {**V3_10, 512: "R"}  # no TASK_PARKED before 3.9: 512 is TASK_STATE_MAX (preempted)
V3_6 = V3_8
V4_1 = {**V3_10, 16: "X", 32: "Z"}  # EXIT_DEAD 16, EXIT_ZOMBIE 32 from 3.15
V4_9 = {  # + TASK_NOLOAD 1024, TASK_NEW 2048, TASK_STATE_MAX 4096
    **V4_1,
    1024: "R",
    2 | 1024: "I",  # TASK_IDLE: 4.14's TASK_REPORT_IDLE
    2048: "R",
    4096: "R",
}
V6_1 = {0: "R", 1: "S", 2: "D", 4: "T", 8: "t", 16: "X", 32: "Z", 64: "P", 128: "I", 256: "R"}  # TASK_REPORT


def letter(reported: int) -> str:
    low = reported & 0xFF
    return "R" if low == 0 else "SDTtXZPI"[(low & -low).bit_length() - 1]


@pytest.mark.parametrize(
    ("release", "expected"),
    [
        ("3.10.31-ltsi", V3_10),
        ("3.8.13", V3_8),
        ("3.6.11-1-ARCH", V3_6),
        ("4.1.0", V4_1),
        ("4.9.0-8-amd64", V4_9),
        ("4.14.0", V6_1),
        ("6.1.0-57-amd64", V6_1),
    ],
)
def test_each_kernels_prev_state_reads_as_its_own_constants_say(release: str, expected: dict[int, str]) -> None:
    table = state_table(release)
    assert {raw: letter(table.report(raw)) for raw in expected} == expected
    assert not table.assumed
    assert (table.to_report is None) == (expected is V6_1)


def test_a_release_that_names_no_version_is_read_as_4_14_and_said() -> None:
    for release in (None, "", "banana"):
        table = state_table(release)
        assert table.to_report is None and "4.14 and later" in table.layout and "env.kernel_release" in table.assumed


@pytest.fixture(scope="module")
def session(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return extract_session(tmp_path_factory.mktemp("lttng"))


@pytest.mark.parametrize("compiled", [True, False], ids=["compiled", "plain"])
def test_the_engine_reads_a_3_10_kernels_prev_state_by_its_layout(
    session: Path, tmp_path: Path, compiled: bool
) -> None:
    """The project's session as if recorded on 3.10 (its metadata's kernel_release rewritten, its switches given
    3.10's raw values): the engine's state letters are 3.10's, the cited record keeps the value recorded."""
    old = with_env(session, tmp_path / "old", kernel_release="3.10.31-ltsi")
    s = Session(str(old), compiled)
    assert not s.notes()  # the release chose the layout: nothing assumed
    raw = list(V3_10)
    for chunk in s.split_rows():
        switches = np.flatnonzero(chunk.head[:, ly.R_KIND] == Kind.SWITCH)[: len(raw)]
        if len(switches) == len(raw):
            break
    rows = chunk.full(switches)
    rows[:, ly.R_V0 + 2] = raw
    batch = kernel_batch(s, rows, chunk.owner[switches], False)
    assert "".join(chr(c) for c in batch.state.tolist()) == "".join(V3_10.values())
    for i, value in enumerate(raw):
        ev = batch.event(i)
        assert f"prev_state={value} ".encode() in ev.line and ev.state == V3_10[value].encode()
    unnamed = with_env(session, tmp_path / "unnamed", kernel_release="")
    (note,) = Session(str(unnamed), compiled).notes()
    assert note == (
        "sched_switch prev_state read as on kernels 4.14 and later (TASK_REPORT): the metadata names no kernel"
        " release (env.kernel_release)"
    )
