"""Whether a source line read for a frame lies in the frame's function: read_source_line judges as copy_fits does.

read_source_line (the BUG/WARN site, the busy-wait loop, each frame's statement for its values) looked for the
nearest definition above the line, one line at a time: a head spread over lines (``static ssize_t
kf_write(struct file *file,`` / ``const char __user *ubuf, size_t n, loff_t *pos)``) was skipped for its trailing
comma and the previous function blamed, and a line above every function was taken as fitting.  copy_fits, which
decides whether a copy found via --source-dir is cited, joins a head over its lines and says "no function".
"""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("drgn")

from forensics.model import NotAvailable
from forensics.types.vmcore import SourceLine
from forensics.vmcore.why import copy_fits, read_source_line
from tests.vmcore_cases import FIXTURES_DIR

SOURCE = """\
/* kf.c: a module */
#include <linux/fs.h>
static int kf_depth = 3;

static int kf_helper(int x)
{
\treturn x + kf_depth;
}

static ssize_t kf_write(struct file *file, const char __user *ubuf,
\t\t\tsize_t n, loff_t *pos)
{
\tstruct kf_dev *dev = file->private_data;

\treturn kf_helper(dev->count) + n;
}
"""


@pytest.fixture
def tree(tmp_path: Path) -> tuple[Path, Path]:
    (tmp_path / "kf").mkdir()
    (tmp_path / "kf" / "kf.c").write_text(SOURCE)
    return tmp_path, tmp_path / "kf" / "kf.c"


def test_a_line_under_a_head_spread_over_lines_lies_in_that_function(tree: tuple[Path, Path]) -> None:
    root, path = tree
    line = SOURCE.splitlines().index("\treturn kf_helper(dev->count) + n;") + 1
    got = read_source_line("kf/kf.c", line, "kf_write", None, (root,), False)
    assert isinstance(got, SourceLine), got
    assert (got.matches_build, got.mismatch, got.text) == (True, None, "return kf_helper(dev->count) + n;")
    assert copy_fits(path.read_text().splitlines(), [(line, "kf_write")]) is None  # the same judgement
    # A compiler's clone of it is the function of its source name, as copy_fits reads it.
    clone = read_source_line("kf/kf.c", line, "kf_write.constprop.0", None, (root,), False)
    assert isinstance(clone, SourceLine) and clone.matches_build, clone


def test_a_line_above_every_function_lies_in_none(tree: tuple[Path, Path]) -> None:
    root, path = tree
    line = SOURCE.splitlines().index("static int kf_depth = 3;") + 1
    got = read_source_line("kf/kf.c", line, "kf_helper", None, (root,), False)
    assert isinstance(got, SourceLine) and got.matches_build is False, got
    assert f"line {line} lies in no function, not in kf_helper()" in str(got.mismatch)
    assert copy_fits(path.read_text().splitlines(), [(line, "kf_helper")]) == (
        f"line {line} lies in no function, not in kf_helper()"
    )
    # The line of a function that is not the frame's is still said (the previous check's one right answer).
    helper = SOURCE.splitlines().index("\treturn x + kf_depth;") + 1
    wrong = read_source_line("kf/kf.c", helper, "kf_write", None, (root,), False)
    assert isinstance(wrong, SourceLine), wrong
    assert f"line {helper} lies in kf_helper(), not in kf_write()" in str(wrong.mismatch)


@pytest.mark.parametrize(
    ("function", "line"),
    [
        ("kf_buffer_put_write", 168),  # frame #1 of 02-bug-on (every fixture kernel)
        ("kf_state_stop_write", 206),  # 03-warn-on
        ("kf_session_close_write", 311),  # 06-list-corrupt
        ("kf_conn_send_write", 467),  # 10-use-after-free
        ("kf_msg_submit_write", 534),  # 12-double-free
        ("kf_client_add_write", 594),  # 13-list-overflow
    ],
)
def test_the_fixture_modules_write_handlers_are_their_own_functions(function: str, line: int) -> None:
    """The fixture module's debugfs write handlers have their heads over two lines: each frame of one was said to
    lie in the function above it (``line 168 lies in kf_buffer_put(), not in kf_buffer_put_write()``), and its
    statement was not read for the frame's values."""
    got = read_source_line("kf_buggy/kf_buggy.c", line, function, None, (FIXTURES_DIR,), False)
    assert isinstance(got, SourceLine) and (got.matches_build, got.mismatch) == (True, None), got


COMMENTED = """\
static int kf_other(int x)
{
\treturn x;
}

static int kf_put(struct kf_buf *buf)\t/* drops a reference */
{
\tBUG_ON(buf->refcount <= 0);
\treturn --buf->refcount;
}

static long kf_get(struct kf_buf *buf, // takes a reference
\t\t   int n) __cold
{
\treturn buf->refcount += n;
}
"""

XFS_STYLE = """\
#include "xfs.h"
STATIC int xfs_lookahead(int n);

STATIC int
xfs_iflush_cluster(
\tstruct xfs_inode\t*ip,\t/* the inode */
\tstruct xfs_buf\t\t*bp)
{
\tint\t\t\terror = 0;

\tBUG_ON(ip == NULL);
\treturn error;
}
"""


@pytest.mark.parametrize(
    ("source", "statement", "function"),
    [
        (COMMENTED, "\tBUG_ON(buf->refcount <= 0);", "kf_put"),  # a comment after the head
        (COMMENTED, "\treturn buf->refcount += n;", "kf_get"),  # a comment on its first line, an attribute after
        (XFS_STYLE, "\tBUG_ON(ip == NULL);", "xfs_iflush_cluster"),  # the type on the line above the name
    ],
    ids=["comment-after-head", "comment-on-head-line", "xfs-style"],
)
def test_a_head_with_a_comment_or_in_the_xfs_style_is_its_function(
    tmp_path: Path, source: str, statement: str, function: str
) -> None:
    """A correct source was called "not the one the kernel was built from" when a head had a comment after it
    (``line 8 lies in kf_other(), not in kf_put()``) or its name started the line under its type (``line 11 lies
    in no function``): a head had to end in ``)`` or ``{`` and have its type on its own line."""
    (tmp_path / "kf").mkdir()
    (tmp_path / "kf" / "kf.c").write_text(source)
    line = source.splitlines().index(statement) + 1
    got = read_source_line("kf/kf.c", line, function, None, (tmp_path,), "BUG_ON" in statement)
    assert isinstance(got, SourceLine), got
    assert (got.matches_build, got.mismatch, got.text) == (True, None, statement.strip())
    assert copy_fits(source.splitlines(), [(line, function)]) is None
    # The function above is still told apart (kf_other's line is not kf_put's).
    other = read_source_line("kf/kf.c", 3, "kf_put", None, (tmp_path,), False)
    assert isinstance(other, SourceLine) and other.matches_build is False, other


def test_a_prototype_in_the_xfs_style_is_no_head() -> None:
    """``STATIC int xfs_lookahead(int n);`` declares, it does not define: a line under it lies in no function."""
    lines = XFS_STYLE.splitlines()
    assert copy_fits(lines, [(3, "xfs_lookahead")]) == "line 3 lies in no function, not in xfs_lookahead()"


def test_one_runs_reader_reads_a_file_once_and_a_new_run_reads_it_anew(tree: tuple[Path, Path]) -> None:
    """The BUG/WARN site, each frame's statement, the loop and the earlier free read the culprit's file through one
    SourceFiles per run (it was read again for each); a reader is the run's, not the process's: an edited file is
    read anew by the next run."""
    from forensics.vmcore.why import SourceFiles

    root, path = tree
    line = SOURCE.splitlines().index("\treturn kf_helper(dev->count) + n;") + 1
    files = SourceFiles()
    first = read_source_line("kf/kf.c", line, "kf_write", None, (root,), False, files)
    path.write_text(SOURCE.replace("kf_helper(dev->count)", "kf_helper(dev->size)"))
    again = read_source_line("kf/kf.c", line, "kf_write", None, (root,), False, files)
    assert isinstance(first, SourceLine) and isinstance(again, SourceLine)
    assert again.text == first.text == "return kf_helper(dev->count) + n;"  # this run's reading of the file
    anew = read_source_line("kf/kf.c", line, "kf_write", None, (root,), False, SourceFiles())
    assert isinstance(anew, SourceLine) and anew.text == "return kf_helper(dev->size) + n;"
    (root / "kf" / "missing.c").mkdir()  # a directory where the file should be: said, and said again from the reader
    for reader in (files, files):
        got = read_source_line("kf/missing.c", 1, "kf_write", None, (root,), False, reader)
        assert isinstance(got, NotAvailable) and "not readable" in got.reason, got


# Modelled on fs/read_write.c, kernel/sys.c, kernel/bpf/helpers.c: functions a macro defines, below a plain one.
MACRO_SOURCE = """\
// SPDX-License-Identifier: GPL-2.0
#include <linux/syscalls.h>

static ssize_t kf_do_write(unsigned int fd, const char __user *buf, size_t count)
{
\treturn count;
}

SYSCALL_DEFINE3(kf_write, unsigned int, fd, const char __user *, buf,
\t\tsize_t, count)
{
\treturn kf_do_write(fd, buf, count);
}

COMPAT_SYSCALL_DEFINE2(kf_ioctl, unsigned int, fd, compat_ulong_t, arg)
{
\treturn kf_do_write(fd, compat_ptr(arg), 0);
}

SYSCALL_DEFINE0(kf_getpid)
{
\treturn task_tgid_vnr(current);
}

BPF_CALL_2(bpf_kf_lookup, struct bpf_map *, map, void *, key)
{
\tWARN_ON_ONCE(!rcu_read_lock_held());
\treturn (unsigned long) map->ops->map_lookup_elem(map, key);
}
"""


@pytest.mark.parametrize(
    ("statement", "functions"),
    [
        (
            "\treturn kf_do_write(fd, buf, count);",
            ("__do_sys_kf_write", "__se_sys_kf_write", "__x64_sys_kf_write", "__arm64_sys_kf_write", "sys_kf_write"),
        ),
        ("SYSCALL_DEFINE3(kf_write, unsigned int, fd, const char __user *, buf,", ("__x64_sys_kf_write",)),
        (
            "\treturn kf_do_write(fd, compat_ptr(arg), 0);",
            ("__do_compat_sys_kf_ioctl", "__se_compat_sys_kf_ioctl", "__ia32_compat_sys_kf_ioctl"),
        ),
        ("\treturn task_tgid_vnr(current);", ("__do_sys_kf_getpid", "__x64_sys_kf_getpid")),
        ("\tWARN_ON_ONCE(!rcu_read_lock_held());", ("____bpf_kf_lookup", "bpf_kf_lookup")),
    ],
    ids=["syscall-body", "syscall-head", "compat", "syscall0", "bpf-helper"],
)
def test_a_frame_in_a_function_a_macro_defines_fits_its_macro_head(
    tmp_path: Path, statement: str, functions: tuple[str, ...]
) -> None:
    """A frame in __do_sys_kf_write lies in SYSCALL_DEFINE3(kf_write, ...): a macro's head has no type before its
    name, so it was no head and the line was taken to lie in kf_do_write() above it (a syscall's statement, BUG/WARN
    site or loop said "not the source the kernel was built from", and the copy not cited)."""
    (tmp_path / "kf").mkdir()
    (tmp_path / "kf" / "kf.c").write_text(MACRO_SOURCE)
    lines = MACRO_SOURCE.splitlines()
    line = lines.index(statement) + 1
    for function in functions:
        assert copy_fits(lines, [(line, function)]) is None, function
        got = read_source_line("kf/kf.c", line, function, None, (tmp_path,), "WARN" in statement)
        assert isinstance(got, SourceLine) and got.matches_build and got.mismatch is None, (function, got)
    # Another system call's frames, or the plain function above, do not fit it; the macro's head is what is named.
    other = "__do_sys_kf_read" if "sys_" in functions[0] else "bpf_kf_update"
    head = next(
        h.split(",")[0].split("(")[0] for h in reversed(lines[:line]) if h.startswith(("SYSCALL", "COMPAT", "BPF"))
    )
    said = copy_fits(lines, [(line, other)])
    assert said is not None and said.startswith(f"line {line} lies in {head}(") and said.endswith(f"not in {other}()")
    assert copy_fits(lines, [(lines.index("\treturn count;") + 1, "kf_do_write")]) is None
    assert copy_fits(lines, [(lines.index("\treturn count;") + 1, "__do_sys_kf_write")]) is not None
