"""Producing items in a background thread while the caller consumes them.

The trace and CTF readers decode in compiled code that releases the GIL, so a
reader thread and the analysing caller use two cores.  One helper owns the
thread protocol both need: a bounded queue (memory stays a few items' worth),
the reader's error raised in the caller's thread, and an early stop when the
caller closes the generator (a window ended, enough was seen).
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable, Generator
from queue import Empty, Queue
from typing import TypeVar

T = TypeVar("T")


def prefetched(
    produce: Callable[[Callable[[T], None], threading.Event], None],
    stop: threading.Event,
    name: str,
    depth: int = 2,
) -> Generator[T, None, None]:
    """The items that ``produce(put, stop)`` puts, produced in a thread named ``name``.

    ``produce`` should return soon after ``stop`` is set.  At most ``depth``
    items wait.  ``stop`` is set when this generator ends, normally, by an
    error or by ``close()``; an exception in ``produce`` is raised here.
    """
    queue: Queue[T | BaseException | None] = Queue(maxsize=depth)

    def run() -> None:
        try:
            produce(queue.put, stop)
            queue.put(None)
        except BaseException as exc:  # handed to the caller's thread, raised there
            queue.put(exc)

    worker = threading.Thread(target=run, name=name, daemon=True)
    worker.start()
    try:
        while (item := queue.get()) is not None:
            if isinstance(item, BaseException):
                raise item
            yield item
    finally:
        stop.set()
        while worker.is_alive():  # let a producer blocked on a full queue finish
            with contextlib.suppress(Empty):
                queue.get(timeout=0.05)
        worker.join()
