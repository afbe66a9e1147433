"""Writing plan changes under a root: backups, refusals, and never a byte outside the root."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pytest

from collectors.kdump.apply import apply_changes, backup_name
from forensics.errors import InputError
from forensics.types.kdump import FileChange
from tests.detectors.kdump.test_golden import tree_digest

WHEN = dt.datetime(2026, 3, 4, 5, 6, 7, tzinfo=dt.UTC)


def test_modify_backs_up_and_keeps_the_mode(tmp_path: Path) -> None:
    root = tmp_path / "root"
    conf = root / "etc/kdump.conf"
    conf.parent.mkdir(parents=True)
    conf.write_text("path /var/crash\n")
    conf.chmod(0o640)
    (done,) = apply_changes(
        [FileChange("/etc/kdump.conf", "path /var/crash\n", "path /srv/crash\n", "test")], root, WHEN
    )
    assert conf.read_text() == "path /srv/crash\n"
    assert conf.stat().st_mode & 0o777 == 0o640
    assert done.backup == str(root / "etc/kdump.conf.kforensic-20260304T050607Z.bak")
    assert Path(done.backup).read_text() == "path /var/crash\n"


def test_backup_names_do_not_collide(tmp_path: Path) -> None:
    target = tmp_path / "grub"
    target.write_text("x\n")
    first = backup_name(target, WHEN)
    first.write_text("x\n")
    assert backup_name(target, WHEN).name == "grub.kforensic-20260304T050607Z-1.bak"


def test_refuses_a_file_edited_since_the_plan(tmp_path: Path) -> None:
    root = tmp_path / "root"
    (root / "etc").mkdir(parents=True)
    (root / "etc/kdump.conf").write_text("path /elsewhere\n")
    with pytest.raises(InputError, match="changed since the plan"):
        apply_changes([FileChange("/etc/kdump.conf", "path /var/crash\n", "new\n", "test")], root, WHEN)
    assert (root / "etc/kdump.conf").read_text() == "path /elsewhere\n"


def test_a_link_out_of_the_tree_is_refused_before_anything_is_written(tmp_path: Path) -> None:
    """An absolute link that names itself would, followed naively, land on the host's /etc/sysctl.d."""
    root = tmp_path / "root"
    (root / "etc/default").mkdir(parents=True)
    (root / "etc/sysctl.d").symlink_to("/etc/sysctl.d")
    outside = tmp_path / "outside"
    outside.mkdir()
    (root / "etc/default/grub.d").symlink_to(outside)  # resolved inside the root: <root>/<tmp_path>/outside
    host_before = tree_digest(Path("/etc/sysctl.d"))
    before = tree_digest(tmp_path)
    changes = [
        FileChange("/etc/default/grub.d/zz-kforensic-kdump.cfg", None, "GRUB_CMDLINE_LINUX_DEFAULT=x\n", "test"),
        FileChange("/etc/sysctl.d/90-kforensic-kdump.conf", None, "kernel.panic = 10\n", "test"),
    ]
    with pytest.raises(InputError, match="outside --root"):
        apply_changes(changes, root, WHEN)
    assert tree_digest(tmp_path) == before
    assert tree_digest(Path("/etc/sysctl.d")) == host_before


def test_links_are_followed_inside_the_root(tmp_path: Path) -> None:
    root = tmp_path / "root"
    (root / "etc/default").mkdir(parents=True)
    outside = tmp_path / "outside"
    outside.mkdir()
    (root / "etc/default/grub.d").symlink_to(outside)  # on the target this is <root>/<tmp_path>/outside
    apply_changes([FileChange("/etc/default/grub.d/zz.cfg", None, "X=1\n", "test")], root, WHEN)
    assert list(outside.iterdir()) == []
    assert (root / str(outside).lstrip("/") / "zz.cfg").read_text() == "X=1\n"


def test_a_fifo_in_the_way_is_refused_without_blocking(tmp_path: Path) -> None:
    import os

    root = tmp_path / "root"
    (root / "etc/sysctl.d").mkdir(parents=True)
    os.mkfifo(root / "etc/sysctl.d/90-kforensic-kdump.conf")
    with pytest.raises(InputError, match="not a regular file"):
        apply_changes([FileChange("/etc/sysctl.d/90-kforensic-kdump.conf", None, "x = 1\n", "test")], root, WHEN)
