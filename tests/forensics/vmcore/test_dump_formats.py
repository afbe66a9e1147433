"""Every container format makedumpfile writes opens and gives the same analysis.

The fixture dumps are zlib-compressed kdump files; makedumpfile (the real tool,
Debian package makedumpfile) rewrites one as lzo, snappy and zstd kdump files and
as the flattened stream of ``-F``.
"""

from __future__ import annotations

import functools
import shutil
import subprocess
from pathlib import Path

import pytest

from forensics.errors import InputError
from forensics.vmcore.dumpfile import DumpFormat, read_dump_header
from tests.vmcore_cases import VmcoreCase, case_names, load_case

pytest.importorskip("drgn")
MAKEDUMPFILE = shutil.which("makedumpfile")
pytestmark = pytest.mark.skipif(MAKEDUMPFILE is None, reason="Debian package makedumpfile is not installed")
CASE = "01-null-member"

#: makedumpfile option -> the format it writes.
VARIANTS = {"-l": "lzo", "-p": "snappy", "-z": "zstd", "-F": "flattened"}


def _case() -> VmcoreCase:
    if CASE not in case_names():
        pytest.skip(f"vmcore fixture {CASE} is absent (vmcore_fixtures/build.sh)")
    return load_case(CASE)


@functools.cache
def _rewrite(option: str, directory: str) -> Path:
    assert MAKEDUMPFILE is not None
    case = _case()
    out = Path(directory) / f"vmcore.{VARIANTS[option]}"
    if option == "-F":
        with out.open("wb") as stream:
            done = subprocess.run([MAKEDUMPFILE, "-F", "-c", "-d", "31", str(case.vmcore)], stdout=stream,
                                  stderr=subprocess.PIPE, check=False)  # fmt: skip
    else:
        done = subprocess.run([MAKEDUMPFILE, option, "-d", "31", str(case.vmcore), str(out)],
                              capture_output=True, check=False)  # fmt: skip
    assert done.returncode == 0, done.stderr
    return out


@pytest.mark.parametrize("option", list(VARIANTS))
def test_format_opens_and_gives_the_same_analysis(option: str, tmp_path_factory: pytest.TempPathFactory) -> None:
    from forensics.pipelines.vmcore import analyse_dump
    from forensics.vmcore.program import DebugInfoRequest

    case = _case()
    dump = _rewrite(option, str(tmp_path_factory.mktemp(VARIANTS[option])))
    header = read_dump_header(dump)
    want = DumpFormat.FLATTENED if option == "-F" else DumpFormat.KDUMP_COMPRESSED
    assert header.format is want
    assert header.dump_level == 31
    assert header.release == "6.1.192"
    result = analyse_dump(dump, DebugInfoRequest(case.vmlinux, (), case.module_debug))
    assert result.incident.sorted_findings()[0].title == case.expected["title"]
    assert not isinstance(result.fault, Exception)
    assert getattr(result.fault, "null_expression", None) == case.expected["null_expression"]


def test_truncated_flattened_stream(tmp_path_factory: pytest.TempPathFactory, tmp_path: Path) -> None:
    dump = _rewrite("-F", str(tmp_path_factory.mktemp("flat")))
    cut = tmp_path / "vmcore.flat"
    cut.write_bytes(dump.read_bytes()[: dump.stat().st_size // 2])
    with pytest.raises(InputError, match="without its end marker"):
        read_dump_header(cut)
