"""A report's architecture from the register names it prints (``why.report_arch``), and the words that let it pass
over a report naming no registers without running the patterns (issue 28: the patterns' search, starting with
``\\b``, tried every position of every report's text)."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from detectors.dmesg.why import _ARCH_REGISTERS, report_arch

# One register line each as the kernels print them (arch/*/kernel/process.c's __show_regs and show_regs).
REGISTER_LINES = {
    "x86_64": [
        "RAX: ffffffffffffffda RBX: 00007f1c8f5a8f80 RCX: 00007f1c8f4e9169",
        "RIP: 0010:__list_del_entry_valid+0x5d/0xa0",
        "IP: [<ffffffff810a376f>] kthread_data+0xf/0x20",  # a 3.x kernel's line above its registers
    ],
    "arm64": [
        "x29: ffff800012cb3b40 x28: ffff0000c5d2a000",
        "pstate: 60400005 (nZCv daif +PAN -UAO -TCO BTYPE=--)",
        "  pc : __list_del_entry_valid+0x5c/0xd0",
    ],
    "arm": [
        "pc : [<8031a6c0>]    lr : [<8031a6b4>]    psr: 20000013",
        "r10: 00000000  r9 : 86b8c000  r8 : 00000000",
        "psr: 60000013 sp : 9f4a3e30  ip : 9f4a3e48",
    ],
    "i386": [
        "EAX: 00000000 EBX: f5d41e00 ECX: 00000001 EDX: 00000000",
        "EIP: __lock_acquire+0x4c/0x1a40",
    ],
}


def test_each_register_line_names_its_architecture() -> None:
    for arch, lines in REGISTER_LINES.items():
        for line in lines:
            text = f"BUG: something\nCPU: 0 PID: 1 Comm: init\n{line}\nCall Trace:\n"
            assert report_arch(text) == arch, line


def test_a_report_without_registers_names_none() -> None:
    text = "INFO: task kworker/0:1:12 blocked for more than 143 seconds.\n  Not tainted 6.1.0\nCall Trace:\n"
    assert report_arch(text) is None


@settings(max_examples=100, deadline=None)
@given(st.data())
def test_every_match_holds_one_of_its_words(data: st.DataObject) -> None:
    # Strings each pattern matches (hypothesis generates them from the pattern itself), with text around them.
    for arch, words, pattern in _ARCH_REGISTERS:
        text = data.draw(st.from_regex(pattern), label=arch)
        assert pattern.search(text)
        assert any(word in text for word in words), (arch, text)


def _searched_whole(text: str) -> str | None:
    """The architecture as the patterns alone name it, each searched over the whole text (before issue 28's cut)."""
    return next((arch for arch, _, pattern in _ARCH_REGISTERS if pattern.search(text)), None)


# Text around a register line: pieces that start or break a match (a word without its digits, a letter before a
# word, blank lines and spaces before arm64's "pc : ", another architecture's words).
_AROUND = st.lists(
    st.sampled_from(["\n", " ", "  ", "E", "R", "x", "_", "RAX: ", "RIP: ", "IP: [<", "pc : ", "r10", "EIP: ", "psr: ",
                     "ffffffff810a376f", "0010:", "8031a6c0", ">]", "Call Trace:\n"]),
    max_size=10,
).map("".join)  # fmt: skip


@settings(max_examples=150, deadline=None)
@given(st.data())
def test_the_architecture_is_the_whole_texts_search(data: st.DataObject) -> None:
    # Searching from the first word's line names what searching the whole text names.
    arch, _, pattern = data.draw(st.sampled_from(_ARCH_REGISTERS))
    text = data.draw(_AROUND) + data.draw(st.from_regex(pattern, fullmatch=True)) + data.draw(_AROUND)
    assert report_arch(text) == _searched_whole(text), (arch, text)
    plain = data.draw(_AROUND)
    assert report_arch(plain) == _searched_whole(plain), plain
