"""What ``kforensic vmcore`` quotes of the dump is what the kernel printed: the log's times as printk wrote them
(byte-identical to makedumpfile's dmesg.txt of the same records), on the real fixtures."""

from __future__ import annotations

import pytest

from forensics.report.vmcore import to_document
from tests.vmcore_cases import analysed_id, kernels_of

drgn = pytest.importorskip("drgn")


def _tail_not_printed(name: str, kernel: str) -> tuple[list[str], list[str]]:
    """The dump's log tail as the report quotes it, and its lines that are no line of the case's dmesg.txt."""
    case, result = analysed_id(name, kernel)
    printed = set(case.dmesg.read_text(errors="replace").splitlines())
    tail: list[str] = to_document(result)["log"]["tail"]
    assert tail, "the dump's log has no tail to compare"
    return tail, [line for line in tail if line not in printed]


@pytest.mark.parametrize("kernel", kernels_of("01-null-member"))
def test_the_dumps_log_is_quoted_with_the_times_printk_printed(kernel: str) -> None:
    """printk prints whole microseconds, truncated: the CR2 lines of 01 are ts_nsec 2359122682 on 6.1, printed
    ``[    2.359122]`` (console.log line 249, dmesg.txt lines 261 and 283); rounded, they read ``2.359123``."""
    tail, not_printed = _tail_not_printed("01-null-member", kernel)
    assert not_printed == []
    if kernel == "6.1":
        assert "[    2.359122] CR2: 0000000000000030" in tail


@pytest.mark.parametrize("kernel", kernels_of("11-abba-deadlock"))
def test_a_hung_task_report_is_quoted_with_the_times_printk_printed(kernel: str) -> None:
    """11's hung-task report: dmesg.txt line 247 is ``[   10.789913]`` on 6.1; the dump's log gave ``10.789914``."""
    assert _tail_not_printed("11-abba-deadlock", kernel)[1] == []
