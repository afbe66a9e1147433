#!/bin/bash
# Record the healthy-machine data of this folder (as root; Linux with tracefs, perf, gzip, python3).
#   tests/data/healthy/record.sh [OUTDIR] [SECONDS]
#
# An ordinary mixed load (workload.sh: a Python busy loop, `ls -R /usr`, gzip of a 50 MB file, crash(8)
# --help, short shell jobs) runs while nothing is wrong with the machine, recorded three ways:
#   ftrace.txt.gz  sched/irq/workqueue events of a private tracefs instance (the top-level tracing setup
#                  is left alone; where the global switch is refused, an instance still records), SECONDS
#                  (default 6) long, raw `trace` text;
#   perf.txt.gz    `perf record -a -g -F 499` of the same workload, as `perf script` text;
#   dmesg.txt.gz   this machine's kernel log (`dmesg`), as it stood after the recordings.
# The machine's other load (builds, test runs of other users) is part of the recording, as it would be
# on any machine: the data is healthy because no task is starved, not because the machine is idle.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
out=$(realpath "${1:-$here}")
secs=${2:-6}
work=$(mktemp -d)
T=/sys/kernel/tracing
mountpoint -q $T || mount -t tracefs nodev $T
I=$T/instances/kf_healthy_$$
mkdir "$I"
cleanup() { echo 0 > "$I/tracing_on" 2>/dev/null || true; rmdir "$I" 2>/dev/null || true; rm -rf "$work"; }
trap cleanup EXIT
echo 32768 > "$I/buffer_size_kb"      # per CPU: enough that nothing is overwritten in SECONDS
for e in sched/sched_switch sched/sched_waking sched/sched_wakeup sched/sched_wakeup_new sched/sched_process_exit \
         irq/irq_handler_entry irq/irq_handler_exit irq/softirq_raise irq/softirq_entry irq/softirq_exit \
         workqueue/workqueue_execute_start workqueue/workqueue_execute_end; do
    echo 1 > "$I/events/$e/enable"
done
head -c 50000000 /dev/urandom > "$work/big"   # gzip's input, made before the recording starts
echo > "$I/trace"
echo 1 > "$I/tracing_on"
"$here/workload.sh" "$work" "$secs"
echo 0 > "$I/tracing_on"
cat "$I/trace" | gzip -9n > "$out/ftrace.txt.gz"
cat "$I/per_cpu"/cpu*/stats > "$out/ftrace.stats.txt"
perf record -q -a -g -F 499 -o "$work/perf.data" -- "$here/workload.sh" "$work" "$secs" > /dev/null 2>&1
perf script -i "$work/perf.data" 2> /dev/null | gzip -9n > "$out/perf.txt.gz"
dmesg | gzip -9n > "$out/dmesg.txt.gz"
{ uname -r; nproc; cat /proc/loadavg; } > "$out/machine.txt"
