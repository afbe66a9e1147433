"""The words of a root-cause hypothesis, one function per class, shared by the dump and the log.

A use-after-free read from a crash dump (:mod:`detectors.vmcore.slab`) and one read
from a kernel log (:mod:`detectors.dmesg.why`) are stated by the same function with
the same fields, so that the same bug gets the same hypothesis whichever input showed
it; a field an input cannot know (the log of a kernel without KASAN does not name the
slab cache) is left out, never guessed.  :class:`Cause` keeps the class and the fields
so that a statement can be checked against, or completed with, another input's fields
(``tests/detectors/dmesg/test_same_cause.py`` does that with the fixtures' dumps).

The class names are those of ``kforensic vmcore``'s ``why.root_cause.class``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

__all__ = [
    "WORDINGS",
    "Cause",
    "LockWaiter",
    "data_race",
    "double_free",
    "list_corruption",
    "list_poison_explain",
    "list_text_explain",
    "lock_cycle",
    "memory_leak",
    "memory_user",
    "object_words",
    "oom",
    "race_access",
    "render",
    "use_after_free",
]


def object_words(cache: str | None = None, address: int | None = None) -> str:
    """``the kmalloc-64 object 0xffff...``, ``the object 0xffff...``, ``a kf_conn object``, ``an object``."""
    if address is not None:
        return f"the {cache} object {address:#x}" if cache else f"the object {address:#x}"
    return f"a {cache} object" if cache else "an object"


def use_after_free(
    func: str,
    cache: str | None = None,
    pointer: str | None = None,
    freed_by: str | None = None,
    referenced_by: Sequence[str] = (),
) -> str:
    """``use-after-free: f uses a kf_conn object after it was freed (rdi = 0x...); freed by g; v still points at it``.

    ``pointer``: how the object was reached (``rdi = 0x...``, ``Read of size 8 at 0x...``).
    """
    text = f"use-after-free: {func} uses {object_words(cache)} after it was freed"
    if pointer:
        text += f" ({pointer})"
    if freed_by:
        text += f"; freed by {freed_by}"
    if referenced_by:
        text += f"; {', '.join(referenced_by)} still points at it"
    return text


def double_free(
    func: str,
    cache: str | None = None,
    address: int | None = None,
    where: str | None = None,
    first_free: str | None = None,
) -> str:
    """``double free in f: the kmalloc-64 object 0x... is freed a second time at f.c:1; the first free was in g``."""
    text = f"double free in {func}: {object_words(cache, address)} is freed a second time"
    if where:
        text += f" at {where}"
    if first_free:
        text += f"; the first free was in {first_free}"
    return text


def list_poison_explain(func: str, member: str | None, poisons: Sequence[str]) -> str:
    """Why an entry whose pointers hold LIST_POISON was already removed (``poisons``: ``next``, ``prev``)."""
    names = {"next": "next = LIST_POISON1", "prev": "prev = LIST_POISON2"}
    words = " and ".join(names[p] for p in poisons)
    verb = "are" if len(poisons) > 1 else "is"
    return (
        f"the entry was already removed: {words} {verb} what list_del() leaves, so {func} deleted "
        f"{member or 'the entry'} twice (or used it after list_del)"
    )


def list_text_explain(value: int, text: str, member: str | None = None, source: str | None = None) -> str:
    """Text where a list pointer should be: an overflow of the member before the list head when that is known."""
    spelled = f"{value:#x} = {text!r} is text, not a pointer"
    if member and source:
        return f"text overflowed from {source} into {member}: {spelled}"
    return f"text overwrote {member or 'a list pointer'}: {spelled}"


def list_corruption(func: str, explain: str, member: str | None = None) -> str:
    """``list corruption of struct s.node in f: <explain>``."""
    return f"list corruption of {member or 'a list entry'} in {func}: {explain}"


@dataclass(frozen=True)
class LockWaiter:
    """A task of a lock cycle: the lock it holds, the lock it wants, where it waits (each None when unknown)."""

    comm: str
    holds: str | None = None
    wants: str | None = None
    waits_in: str | None = None


def lock_cycle(waiters: Sequence[LockWaiter | Mapping[str, Any]]) -> str:
    """``AB-BA deadlock: A holds x and wants y; B holds y and wants x``.

    When the input names no lock (a log without lockdep or lock owners), the tasks and where
    they wait are stated, and the cycle is called possible.
    """
    tasks = [w if isinstance(w, LockWaiter) else LockWaiter(**w) for w in waiters]
    kind = "AB-BA deadlock" if len(tasks) == 2 else f"lock cycle of {len(tasks)} tasks"
    if all(t.holds and t.wants for t in tasks):
        return f"{kind}: " + "; ".join(f"{t.comm} holds {t.holds} and wants {t.wants}" for t in tasks)
    parts = [f"{t.comm} waits for {t.wants or 'a lock'}" + (f" in {t.waits_in}" if t.waits_in else "") for t in tasks]
    return (
        f"possible {kind}: "
        + "; ".join(parts)
        + " (the log names no lock held: without lockdep the cycle is not shown)"
    )


#: How each kind of memory user reads before its name (the page cache's and shmem's names say what they are).
_USER_PREFIX = {"task": "task ", "slab": "slab cache ", "vmalloc": "vmalloc by ", "page-cache": "", "shmem": ""}


def memory_user_label(kind: str, name: str, pid: int | None = None) -> str:
    """``task kf_memhog (pid 41)``, ``slab cache kmalloc-512``, ``vmalloc by n_tty_open``, ``page cache (files)``."""
    return _USER_PREFIX.get(kind, f"{kind} ") + name + (f" (pid {pid})" if pid is not None else "")


def memory_user(kind: str, name: str, size: int, pid: int | None = None, total: int | None = None) -> str:
    """``task kf_memhog (pid 41) with 123.8 MiB, 86% of RAM`` (``size`` and ``total`` in bytes)."""
    text = memory_user_label(kind, name, pid) + f" with {size / 2**20:.1f} MiB"
    if total:
        text += f", {100 * size / total:.0f}% of RAM"
    return text


def oom(kind: str, name: str, size: int, pid: int | None = None, total: int | None = None) -> str:
    """``memory exhausted by task kf_memhog (pid 41) with 123.8 MiB, 86% of RAM``."""
    return f"memory exhausted by {memory_user(kind, name, size, pid, total)}"


#: How a KCSAN access type reads as a verb (kernel/kcsan/report.c's get_access_type, without the marks).
_RACE_VERBS = {"read": "reads", "write": "writes", "read-write": "reads and writes",
               "assert no writes": "asserts no concurrent writes to",
               "assert no accesses": "asserts exclusive access to"}  # fmt: skip


def race_access(
    func: str,
    access: str,
    size: int | None = None,
    address: int | None = None,
    caller: str | None = None,
    interrupt: bool = False,
) -> str:
    """``strscpy (from __set_task_comm) writes 8 bytes at 0xffff...``: one side of a data race.

    ``access``: KCSAN's type with its marks (``read``, ``write (marked)``, ``assert no writes``); ``caller``: the
    first frame of the stack outside the helpers (strscpy, xas_*), named when it is not ``func`` itself.
    """
    kind, _, marks = access.partition(" (")
    text = func + (f" (from {caller})" if caller and caller != func else "")
    text += f" {_RACE_VERBS.get(kind, kind)}"
    if size is not None:
        text += f" {size} byte{'s' if size != 1 else ''}"
    if address is not None:
        text += f" at {address:#x}"
    if marks:
        text += f" ({marks}"  # "marked", "scoped", "reordered": what KCSAN knows of the access
    return text + (" in an interrupt" if interrupt else "")


def data_race(accesses: Sequence[Mapping[str, Any]], value_change: str | None = None) -> str:
    """``data race: A writes 8 bytes at 0x... while B reads 8 bytes at 0x...; the value changed 0x1 -> 0x2``.

    ``accesses``: each side's :func:`race_access` fields, as KCSAN prints them (one when the other access is of
    unknown origin: the value changed while KCSAN watched, no access of its own was seen).
    """
    sides = [race_access(**a) for a in accesses]
    if len(sides) >= 2:
        text = (
            f"data race: {sides[0]} while {sides[1]}, with no lock in common and not both marked (READ_ONCE/WRITE_ONCE)"
        )
    else:
        text = f"data race: {sides[0]} while an access KCSAN did not see (unknown origin) changes it"
    if value_change:
        text += f"; the value changed {value_change}"
    return text


def memory_leak(
    func: str,
    size: int | None = None,
    address: int | None = None,
    task: str | None = None,
    pid: int | None = None,
) -> str:
    """``memory leak: f allocated the 32-byte object 0x... (task t, pid 1), and nothing points at it any more``."""
    what = f"the {size}-byte object" if size is not None else "an object"
    if address is not None:
        what += f" {address:#x}"
    text = f"memory leak: {func} allocated {what}"
    if task or pid is not None:
        text += " (" + ", ".join(x for x in (f"task {task}" if task else "", f"pid {pid}" if pid is not None else "")
                                 if x) + ")"  # fmt: skip
    return text + ", and nothing points at it any more: a path drops its last pointer without freeing it"


def _list_corruption(**fields: Any) -> str:
    func = fields["func"]
    member = fields.get("member")
    if fields.get("text") is not None:
        explain = list_text_explain(fields["value"], fields["text"], member, fields.get("source"))
    elif fields.get("poisons"):
        explain = list_poison_explain(func, member, fields["poisons"])
    else:
        explain = fields["explain"]
    return list_corruption(func, explain, member)


#: Each class's wording from its fields (what :class:`Cause` and the tests render).
WORDINGS: dict[str, Callable[..., str]] = {
    "use_after_free": use_after_free,
    "double_free": double_free,
    "list_corruption": _list_corruption,
    "lock_cycle": lock_cycle,
    "oom": oom,
    "data_race": data_race,
    "memory_leak": memory_leak,
}


def render(cls: str, fields: Mapping[str, Any]) -> str:
    """The statement of a class from its fields (a field left out is one the input did not show)."""
    return WORDINGS[cls](**fields)


@dataclass(frozen=True)
class Cause:
    """A root-cause hypothesis as data: its class, the fields it was stated from, and the statement.

    Classes without a shared wording (only the log shows them: an out-of-bounds access, a lock
    order lockdep reports, an RCU stall) carry their statement as a field.
    """

    cls: str
    fields: tuple[tuple[str, Any], ...]
    confidence: float
    next_command: str

    @property
    def statement(self) -> str:
        """The hypothesis in words."""
        fields = dict(self.fields)
        if self.cls in WORDINGS:
            return render(self.cls, fields)
        return str(fields["statement"])
