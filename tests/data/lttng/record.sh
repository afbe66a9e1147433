#!/bin/bash
# Record the request workload (workload.c) with LTTng UST and ftrace at once, on CLOCK_MONOTONIC, as root.
#   tests/data/lttng/record.sh OUTDIR [REQUESTS]
# Writes OUTDIR/ust.tar.gz (the LTTng session's ust/ tree), OUTDIR/kernel.ftrace.txt.gz (tracefs instance
# text, trace_clock=mono, CPU 0 only), OUTDIR/tids.txt (the workload's thread ids).  LTTng kernel tracing
# needs lttng-modules, which this machine cannot load; the kernel side is ftrace.  Runs with a session daemon of its
# own (private-sessiond.sh); exit status 77: this machine cannot record (why on stderr).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/private-sessiond.sh"
kf_private_lttng "$0" "$@"
out=$(realpath "$1"); n=${2:-60}
mkdir -p "$out"
work=$(mktemp -d)
gcc -O1 -Wall -I"$here" -o "$work/workload" "$here/workload.c" "$here/infer_tp.c" -llttng-ust -ldl -lpthread
mountpoint -q /sys/kernel/tracing || mount -t tracefs nodev /sys/kernel/tracing
inst=/sys/kernel/tracing/instances/kf_lttng_$$
rmdir "$inst" 2>/dev/null || true
mkdir "$inst"
echo mono > "$inst/trace_clock"
echo 3 > "$inst/tracing_cpumask"           # CPUs 0-1: the workload is pinned to CPU 0, IO completes on either
echo 8192 > "$inst/buffer_size_kb"
for e in sched/sched_switch sched/sched_waking sched/sched_wakeup sched/sched_wakeup_new irq/irq_handler_entry \
         irq/irq_handler_exit irq/softirq_raise irq/softirq_entry irq/softirq_exit; do
    echo 1 > "$inst/events/$e/enable"
done
session="kf_lttng_$$"
lttng create "$session" --output="$work/session" >/dev/null
lttng enable-channel -u -s "$session" channel0 >/dev/null
lttng enable-event -u -s "$session" -c channel0 'lttng_ust_tracef:*' >/dev/null
lttng enable-event -u -s "$session" -c channel0 'infer:*' >/dev/null
lttng add-context -u -s "$session" -c channel0 -t vtid -t procname >/dev/null
lttng start "$session" >/dev/null
echo 1 > "$inst/tracing_on"
# (the workload waits for the daemon to tell it what to record however long that takes: by default 3 s, then untraced)
LTTNG_UST_REGISTER_TIMEOUT=-1 "$work/workload" "$work/scratch" "$inst/trace_marker" "$n" > "$out/tids.txt"
echo 0 > "$inst/tracing_on"
lttng stop "$session" >/dev/null
lttng destroy "$session" >/dev/null
cat "$inst/trace" | gzip -9 > "$out/kernel.ftrace.txt.gz"
rmdir "$inst"
tar -C "$work/session" -czf "$out/ust.tar.gz" ust
rm -rf "$work"
ls -la "$out"
