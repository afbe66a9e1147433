"""An interpreter-bound workload: a pure-Python loop.  Recorded by ../record.sh."""

import sys


def hot(n: int) -> int:
    total = 0
    for i in range(n):
        total += i * i % 7
    return total


print(hot(int(sys.argv[1]) if len(sys.argv) > 1 else 3_000_000))
