#!/bin/sh
# Record kf.perf-lost.txt (run as root, perf): a perf recording that loses events (a one-page buffer per CPU,
# `perf record -m 1 -a` of scheduler and IRQ events for 0.5 s on a busy machine), printed with
# `perf script --show-lost-events` (its PERF_RECORD_LOST lines; `perf script` alone prints the same text without them).
set -eu
here=$(cd "$(dirname "$0")" && pwd)
out=${1:-$here}
perf record -q -m 1 -a -o "$out/lost.data" \
    -e sched:sched_switch -e sched:sched_waking -e irq:irq_handler_entry -e irq:irq_handler_exit -- sleep 0.5
perf script --show-lost-events -i "$out/lost.data" > "$out/kf.perf-lost.txt" 2>/dev/null
perf report --stats -i "$out/lost.data" 2>/dev/null | grep LOST  # what perf itself counts, for the README
rm -f "$out/lost.data"
gzip -9 -n -f "$out/kf.perf-lost.txt"
