#!/bin/sh
# Record the traces of this folder (run as root on a machine with >= 2 CPUs and trace-cmd).
# Uses a private tracefs instance, so the top-level tracing setup is left alone.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
out=${1:-$here}
T=/sys/kernel/tracing
[ -d $T/instances ] || mount -t tracefs nodev $T
I=$T/instances/kforensic_rec
rmdir $I 2>/dev/null || true
mkdir $I
trap '[ -d $I ] && { echo 0 > $I/tracing_on; rmdir $I; } 2>/dev/null || true' EXIT
echo 256 > $I/buffer_size_kb
for e in sched/sched_switch sched/sched_waking sched/sched_wakeup sched/sched_wakeup_new sched/sched_process_exit \
         irq/irq_handler_entry irq/irq_handler_exit irq/softirq_raise irq/softirq_entry irq/softirq_exit \
         workqueue/workqueue_execute_start workqueue/workqueue_execute_end \
         irq_vectors/local_timer_entry irq_vectors/local_timer_exit; do
    echo 1 > $I/events/$e/enable
done
echo > $I/trace
echo 1 > $I/tracing_on
python3 "$here/workload.py" /var/tmp
echo 0 > $I/tracing_on
cat $I/trace > "$out/kf.ftrace.txt"
trace-cmd extract -B kforensic_rec -o "$out/kf.trace.dat" > /dev/null 2>&1
trace-cmd report -i "$out/kf.trace.dat" > "$out/kf.tc-report.txt"
trace-cmd report -l -i "$out/kf.trace.dat" > "$out/kf.tc-report-l.txt"
trace-cmd report -N -i "$out/kf.trace.dat" > "$out/kf.tc-report-N.txt"
rm -f "$out/kf.trace.dat"
# A second run of the same workload through perf (kernel print formats, "sched:" prefixes).
perf record -q -o "$out/perf.data" -a \
    -e sched:sched_switch -e sched:sched_waking -e sched:sched_wakeup \
    -e irq:irq_handler_entry -e irq:irq_handler_exit -e irq:softirq_raise -e irq:softirq_entry -e irq:softirq_exit \
    -- python3 "$here/workload.py" /var/tmp
perf script -i "$out/perf.data" > "$out/kf.perf-script.txt" 2>/dev/null
rm -f "$out/perf.data"
for f in kf.ftrace.txt kf.tc-report.txt kf.tc-report-l.txt kf.tc-report-N.txt kf.perf-script.txt; do
    gzip -9 -n -f "$out/$f"
done
