"""Issue #32 item 6: the storage fails one byte range of the dump (EIO): the analysis goes on and names it.

A FUSE file system (``eio_fs.py``, fusepy + libfuse2) serves a fixture dump and
fails every read that overlaps one range of it, as a failing disk sector or a
network file system does.  Before the fix the page check hit the error and the
run was an internal error (exit 4).  Skipped where FUSE cannot be used.
"""

from __future__ import annotations

import os
import re
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.forensics.test_cli import run
from tests.helpers import fuse_mounted
from tests.vmcore_cases import VmcoreCase, load_case

SERVER = Path(__file__).with_name("eio_fs.py")
BAD = (2_000_000, 2_065_536)  # inside the 4.3 MB dump's page data


@pytest.fixture
def failing_dump(tmp_path: Path) -> Iterator[tuple[VmcoreCase, Path]]:
    case = load_case("02-bug-on")
    source = tmp_path / "source"
    source.mkdir()
    shutil.copyfile(case.vmcore, source / "vmcore")
    with fuse_mounted(SERVER, source, tmp_path / "mnt", *map(str, BAD), ready="vmcore") as mount:
        yield case, mount / "vmcore"


def test_an_unreadable_range_is_named_and_the_analysis_goes_on(failing_dump: tuple[VmcoreCase, Path]) -> None:
    case, dump = failing_dump
    with pytest.raises(OSError), dump.open("rb") as f:  # the range really fails
        os.pread(f.fileno(), 4096, BAD[0])
    args = ["vmcore", dump, "--vmlinux", case.vmlinux, *(a for m in case.module_debug for a in ("--module-debug", m))]
    done = run(*args)
    assert done.returncode == 0, done.stderr  # was 4: internal error: OSError: [Errno 5] Input/output error
    text = " ".join(done.stdout.split())
    assert "kernel BUG in kf_buffer_put" in text  # the analysis went on
    found = re.search(r"the dump cannot be read at bytes (\d+)\.\.(\d+) \(I/O error", text)
    assert found, text[:3000]
    lo, hi = int(found.group(1)), int(found.group(2))
    assert lo <= BAD[1] and hi >= BAD[0]  # the named range is the failing one (whole pages around it)
    assert hi - lo < 4 * (BAD[1] - BAD[0])
