"""Issue #32 item 1: ``--store`` that is a device node, a FIFO, a directory or a link to a device.

Before the fix SQLite failed on the node ("disk I/O error") and the failed
creation removed it: as root, a mistyped ``--store /dev/sdb1`` deleted the node.
Each case uses a real node made in a temporary directory (``os.mknod``).
"""

from __future__ import annotations

import os
import stat
from collections.abc import Callable
from pathlib import Path

import pytest

from collectors.slabstore import STORE_FILE_NAME
from tests.collectors.test_procfs import FakeTree
from tests.forensics.commands.test_slabwatch_cli import fast_watch, kforensic

SNAPSHOTS = Path("vmcore_fixtures/cases/08-slab-leak/snapshots")


def _char_device(where: Path) -> Path:
    node = where / "sdb1"
    try:
        os.mknod(node, 0o600 | stat.S_IFCHR, os.makedev(1, 3))  # the numbers of /dev/null: harmless if written
    except PermissionError:
        pytest.skip("making a device node needs root (CAP_MKNOD)")
    return node


def _fifo(where: Path) -> Path:
    node = where / "pipe"
    os.mkfifo(node, 0o600)
    return node


def _directory(where: Path) -> Path:
    # `--store DIR` means DIR/slab-watch.sqlite (documented): refused when that is itself a directory.
    (where / "d" / STORE_FILE_NAME).mkdir(parents=True)
    return where / "d"


def _link_to_device(where: Path) -> Path:
    device = _char_device(where)
    link = where / "store.sqlite"
    link.symlink_to(device)
    return link


def _dangling_link(where: Path) -> Path:
    link = where / "store.sqlite"
    link.symlink_to(where / "elsewhere" / "x.sqlite")
    return link


NODES: dict[str, Callable[[Path], Path]] = {
    "char-device": _char_device,
    "fifo": _fifo,
    "directory": _directory,
    "link-to-device": _link_to_device,
    "dangling-link": _dangling_link,
}


def _state(where: Path) -> dict[str, tuple[int, int, int]]:
    """Every name under ``where`` with its type, device numbers and size (lstat)."""
    out = {}
    for name in sorted(os.listdir(where)):
        st = os.lstat(where / name)
        out[name] = (stat.S_IFMT(st.st_mode), st.st_rdev, st.st_size if stat.S_ISREG(st.st_mode) else 0)
    return out


@pytest.mark.parametrize("command", ["slab-import", "slab-watch"])
@pytest.mark.parametrize("kind", list(NODES))
def test_a_store_that_is_not_a_regular_file_is_refused_and_left_alone(tmp_path: Path, kind: str, command: str) -> None:
    nodes = tmp_path / "nodes"
    nodes.mkdir()
    target = NODES[kind](nodes)
    before = _state(nodes)
    if command == "slab-import":
        done = kforensic("slab-import", str(SNAPSHOTS), "--store", str(target), "--no-analysis")
    else:
        done = fast_watch(FakeTree(tmp_path / "root"), target)
    assert done.returncode == 2, done.stderr
    errors = [line for line in done.stderr.splitlines() if line.startswith("kforensic: error: ")]
    assert len(errors) == 1 and errors[0].startswith("kforensic: error: --store "), done.stderr
    assert "Traceback" not in done.stderr
    assert _state(nodes) == before  # the node (and the directory around it) untouched, nothing added
    if kind == "directory":
        assert os.listdir(nodes / "d" / STORE_FILE_NAME) == []


def test_a_new_path_and_an_existing_store_still_work(tmp_path: Path) -> None:
    # (a new store file in an existing directory: one in a directory that does not exist is exit 3, test_slabwatch_cli)
    store = tmp_path / "slab.sqlite"
    done = kforensic("slab-import", str(SNAPSHOTS), "--store", str(store), "--no-analysis")
    assert done.returncode == 0, done.stderr
    link = tmp_path / "link.sqlite"
    link.symlink_to(store)  # a link to a store file is followed
    done = fast_watch(FakeTree(tmp_path / "root"), link)
    assert done.returncode == 0, done.stderr
    assert link.is_symlink() and stat.S_ISREG(store.stat().st_mode)


@pytest.mark.parametrize("command", ["leaks", "report"])
def test_a_directory_holding_the_store_is_read_by_leaks_and_report_alike(tmp_path: Path, command: str) -> None:
    """``--store DIR`` reads DIR/slab-watch.sqlite (documented): ``leaks`` and ``slab-watch`` did, ``report`` said
    "DIR: no such store" (exit 3)."""
    done = kforensic("slab-import", str(SNAPSHOTS), "--store", str(tmp_path / STORE_FILE_NAME), "--no-analysis")
    assert done.returncode == 0, done.stderr
    out = tmp_path / "out.json"
    extra = ["--json", str(out)] if command == "report" else ["--format", "json", "-o", str(out)]
    done = kforensic(command, "--store", str(tmp_path), *extra)
    assert done.returncode == 0, done.stderr
    assert str(tmp_path / STORE_FILE_NAME) in out.read_text()  # the store's samples are cited as evidence
    assert "kf_leak_obj" in out.read_text()
