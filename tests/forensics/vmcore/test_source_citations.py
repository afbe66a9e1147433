"""Source locations of a dump are cited as files the reader can open: the copy found via --source-dir.

The debug info names the build machine's path (the fixtures' module: ``/work/wt/vmcore/.../kf_buggy.c``), which
does not exist where the dump is read; with ``--source-dir`` the file was found, yet every location of the headline,
the backtrace and the why was that path (review 5, #12).  The debug info's path stays where it helps: the crash
finding's ``source`` fact, the backtrace's list of files found, the JSON's ``source``.
"""

from __future__ import annotations

import dataclasses
import os
from pathlib import Path
from typing import Any

import pytest

from forensics.model import FindingKind, NotAvailable
from forensics.report.vmcore import render_vmcore_markdown, to_document
from tests.vmcore_cases import FIXTURES_DIR, analysed_id, load_case

pytest.importorskip("drgn")

MODULE_SOURCE = FIXTURES_DIR / "kf_buggy" / "kf_buggy.c"


def _module_frame(result: Any) -> Any:
    return next(f for f in result.snapshot.backtrace if f.module == "kf_buggy" and f.source_line)


@pytest.mark.parametrize("key", ["6.1/01-null-member", "6.12/10-use-after-free"])
def test_a_module_location_is_the_file_found_via_source_dir(key: str) -> None:
    _, result = analysed_id(key)
    snap = result.snapshot
    frame = _module_frame(result)
    dwarf = f"{frame.source_file}:{frame.source_line}"
    assert not Path(frame.source_file).exists()  # the build machine's path: nothing to open here
    copy = os.path.relpath(MODULE_SOURCE)  # analysed with --source-dir vmcore_fixtures (from the checkout's root)
    local = f"{copy}:{frame.source_line}"

    crash = next(f for f in result.incident.findings if f.kind is FindingKind.CRASH)
    crash_frame = result.analysis.crash_frame
    assert crash_frame.module == "kf_buggy"
    at = f"{copy}:{crash_frame.source_line}"
    assert f"({at})" in crash.summary and frame.source_file not in crash.summary
    source = next(fact.value for fact in crash.facts if fact.name == "source")
    assert source == f"{at} (found via --source-dir; the debug info names {crash_frame.source_file})"
    # No other statement of a finding sends the reader to the build machine's path.
    for finding in result.incident.findings:
        told = [finding.title, finding.summary, *(x.value for x in finding.facts if x.name != "source")]
        assert not [t for t in told if frame.source_file in t], finding.title

    doc = to_document(result)
    (entry,) = [f for f in doc["backtrace"] if f["index"] == frame.index]
    assert entry["source"] == dwarf and entry["local_source"] == local
    values = [v for v in doc["why"]["frame_values"] if v["frame"] == frame.index]
    assert all(v["local_source"] == local for v in values)

    text = render_vmcore_markdown(result)
    backtrace = text.split("## Backtrace of the crashed thread", 1)[1].split("\n## ", 1)[0]
    assert f"  {local}\n" in backtrace and frame.source_file + ":" not in backtrace
    assert f"`{local.rsplit(':', 1)[0]}`, named `{frame.source_file}` in the debug info" in backtrace
    window = text.split("## Faulting instruction", 1)[1].split("\n## ", 1)[0]
    assert f"{copy}:" in window and frame.source_file not in window
    assert snap.where(frame) == local


def test_without_a_copy_the_debug_info_path_is_cited() -> None:
    _, result = analysed_id("6.1/01-null-member")
    frame = _module_frame(result)
    bare = dataclasses.replace(result.snapshot, follow_up=NotAvailable("not recorded"))
    assert bare.where(frame) == frame.where()
    assert bare.cite_with_origin(frame.source_file, frame.source_line) == frame.where()
    vmlinux = next(f for f in result.snapshot.backtrace if f.module is None and f.source_file)
    assert result.snapshot.where(vmlinux) == vmlinux.where()  # not found under --source-dir: as the debug info says


def _analysed_with_sources(name: str, source_dir: Path) -> Any:
    from forensics.pipelines.vmcore import analyse_dump
    from forensics.vmcore.program import DebugInfoRequest

    case = load_case(name, "6.12")
    return analyse_dump(case.directory, DebugInfoRequest(case.vmlinux, (), case.module_debug, (source_dir,)))


def test_a_copy_that_is_not_the_build_is_not_cited(tmp_path: Path) -> None:
    """A copy 20 lines off (another version of the module) cited as the crash location sent the reader to
    ``return -ENOMEM;`` in another function, while the report itself said the source is not the build's (review
    6, #2): the debug info's path is cited, and the copy named with why it is not."""
    shifted = tmp_path / "kf_buggy" / "kf_buggy.c"
    shifted.parent.mkdir()
    shifted.write_text("/* an older copy */\n" * 20 + MODULE_SOURCE.read_text())
    result = _analysed_with_sources("02-bug-on", tmp_path)
    frame = result.analysis.crash_frame
    assert frame.module == "kf_buggy" and frame.function == "kf_buffer_put"
    dwarf = f"{frame.source_file}:{frame.source_line}"
    assert result.snapshot.where(frame) == dwarf

    crash = next(f for f in result.incident.findings if f.kind is FindingKind.CRASH)
    assert f"({dwarf})" in crash.summary and str(tmp_path) not in crash.summary
    source = next(fact.value for fact in crash.facts if fact.name == "source")
    assert source.startswith(f"{dwarf} (the copy found via --source-dir, {shifted}, is not cited: line 156 lies in")
    doc = to_document(result)
    assert all(f["local_source"] is None for f in doc["backtrace"])
    (unused,) = doc["follow_up"]["unused_sources"]
    assert unused["debug_info"] == frame.source_file and unused["local"] == str(shifted)
    assert doc["follow_up"]["sources"] == []

    text = render_vmcore_markdown(result)
    backtrace = text.split("## Backtrace of the crashed thread", 1)[1].split("\n## ", 1)[0]
    assert f"  {dwarf}\n" in backtrace and f"`{shifted}`, found for `{frame.source_file}`: line 156" in backtrace
    window = text.split("## Where the CPU stopped", 1)[1].split("\n## ", 1)[0]  # a trap: no fault to reason on
    assert "=> " in window and f"{frame.source_file}:156" in window and str(tmp_path) not in window


def test_a_kernel_file_shorter_than_the_cited_line_is_not_cited(tmp_path: Path) -> None:
    """Without a BUG line to check, a one-line ``kernel/hung_task.c`` was cited as ``hung_task.c:229`` with no word
    of warning (review 6, #2); a file of comments as long as the real one is not the build's either."""
    fake = tmp_path / "kernel" / "hung_task.c"
    fake.parent.mkdir()
    for body, why in [
        ("int x;\n", "it has only 1 line, the debug info cites line 229"),
        ("/* not it */\n" * 499, "line 229 lies in no function, not in check_hung_uninterruptible_tasks()"),
    ]:
        fake.write_text(body)
        result = _analysed_with_sources("04-hung-task", tmp_path)
        frames = [f for f in result.snapshot.backtrace if f.source_file == "kernel/hung_task.c"]
        assert [f.source_line for f in frames] == [229, 381]
        assert all(result.snapshot.where(f) == f"kernel/hung_task.c:{f.source_line}" for f in frames)
        assert result.snapshot.follow_up.unused_source("kernel/hung_task.c") == (str(fake), why)
        crash = next(f for f in result.incident.findings if f.kind is FindingKind.CRASH)
        assert "(kernel/hung_task.c:229 in check_hung_uninterruptible_tasks, inlined)" in crash.summary


def test_a_source_dir_named_with_a_newline_is_cited_escaped(tmp_path: Path) -> None:
    """A --source-dir with a newline in its name was printed with the newline as a space ("odd dir/x y/kf_buggy.c:156",
    a file that does not exist) or as a line break (the backtrace's rows): the text and markdown show the path's repr,
    as forensics/quoting.py names hostile values; the JSON's path fields keep the path's own string (ue6 10e)."""
    from forensics.report.formats import Destination
    from forensics.report.vmcore import VmcoreRenderer

    odd = tmp_path / "odd dir" / "x\ny"
    (odd / "kf_buggy").mkdir(parents=True)
    copy = odd / "kf_buggy" / "kf_buggy.c"
    copy.write_text(MODULE_SOURCE.read_text())
    result = _analysed_with_sources("02-bug-on", odd)
    shown = f"{str(copy)!r}:156"  # '/tmp/.../odd dir/x\ny/kf_buggy/kf_buggy.c':156, its newline as \n
    assert "\\n" in shown and "\n" not in shown
    text = VmcoreRenderer().text(result, Destination())
    markdown = render_vmcore_markdown(result)
    for rendered in (text, markdown):
        flat = " ".join(rendered.split())  # the terminal's cells wrap
        assert "x y/kf_buggy" not in flat and "x\ny/kf_buggy" not in rendered
        assert shown in flat or shown in flat.replace("\\\\", "\\"), flat[:3000]  # markdown's prose escapes "\"
    assert f"- `{str(copy)!r} line 156`" in markdown  # the why's evidence, a code span: as it is
    doc = to_document(result)
    assert doc["backtrace"][0]["local_source"] == f"{copy}:156"
    assert doc["follow_up"]["sources"][0]["local"] == str(copy)
    evidence = [e["source"] for f in doc["incident"]["findings"] for e in f["evidence"]]
    assert str(copy) in evidence


def test_the_next_command_of_a_source_dir_named_with_a_newline_runs(tmp_path: Path) -> None:
    """The NULL member's next command quoted its path with shlex.quote, the newline kept inside the quotes, and the
    report shows a command on one line: text and markdown printed ``'odd dir/x y/kf_buggy/kf_buggy.c'``, a file
    that does not exist (ue10 #12).  Bash's ``$'...'`` carries the newline escaped, and the command runs."""
    import subprocess

    from forensics.pipelines.vmcore import analyse_dump
    from forensics.report.formats import Destination
    from forensics.report.vmcore import VmcoreRenderer
    from forensics.vmcore.program import DebugInfoRequest

    odd = tmp_path / "odd dir" / "x\ny"
    (odd / "kf_buggy").mkdir(parents=True)
    copy = odd / "kf_buggy" / "kf_buggy.c"
    copy.write_text(MODULE_SOURCE.read_text())
    case = load_case("01-null-member", "6.1")
    result = analyse_dump(case.directory, DebugInfoRequest(case.vmlinux, (), case.module_debug, (odd,)))
    word = "$'" + str(copy).replace("\n", "\\n") + "'"
    command = f"grep -n 'sensor' {word}"
    text = VmcoreRenderer().text(result, Destination())
    markdown = render_vmcore_markdown(result)
    for rendered in (text, markdown):
        flat = " ".join(rendered.split())  # the terminal's cells wrap
        assert "x y/kf_buggy" not in flat
        assert command in flat.replace("\\\\", "\\"), flat[:3000]  # markdown's prose escapes "\"
    ran = subprocess.run(["bash", "-c", command], capture_output=True, text=True, check=False)
    assert ran.returncode == 0 and "sensor" in ran.stdout, ran
