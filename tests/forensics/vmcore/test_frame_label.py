"""How a frame names the symbol that holds its pc beside its function (forensics/types/vmcore.py Frame.label)."""

from __future__ import annotations

from forensics.types.vmcore import Frame


def _frame(function: str, symbol: str | None, offset: int = 0x13F, size: int = 0x1F7) -> Frame:
    return Frame(4, function, 0xFFFFFFFF81000000, offset, size, None, None, None, symbol=symbol)


def test_a_compiler_clone_is_said_a_clone_and_a_cold_part_a_part() -> None:
    """``__mutex_lock.constprop.0`` is a whole copy of __mutex_lock GCC specialised, not a part of it: it read
    "(part of __mutex_lock)", as ``kf_msg_submit.cold`` and a label inside an assembly function rightly do."""
    assert _frame("__mutex_lock", "__mutex_lock.constprop.0").label() == (
        "__mutex_lock.constprop.0+0x13f/0x1f7 (a compiler clone of __mutex_lock)"
    )
    assert _frame("tcp_v4_rcv", "tcp_v4_rcv.isra.0").label().endswith("(a compiler clone of tcp_v4_rcv)")
    assert _frame("kf_msg_submit", "kf_msg_submit.cold", 0x18, 0x39).label() == (
        "kf_msg_submit.cold+0x18/0x39 (part of kf_msg_submit)"
    )
    assert _frame("foo", "foo.part.0").label().endswith("(part of foo)")
    assert (
        _frame("entry_SYSCALL_64", "entry_SYSCALL_64_after_hwframe", 0x4B, 0xB5)
        .label()
        .endswith("(part of entry_SYSCALL_64)")
    )
    assert _frame("kf_msg_submit", None).label() == "kf_msg_submit+0x13f/0x1f7"
