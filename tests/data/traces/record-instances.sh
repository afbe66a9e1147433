#!/bin/sh
# Record kf.tc-report-B2.txt (run as root, trace-cmd 3.x): two tracefs instances whose names end in digits
# (kf_sched1: scheduler events, kf_irq2: IRQ events), extracted together with `trace-cmd extract -B -B`, so
# that `trace-cmd report` prefixes each line with its instance's name ("kf_sched1:  bash-12 [000] 1.2: ...").
set -eu
here=$(cd "$(dirname "$0")" && pwd)
out=${1:-$here}
T=/sys/kernel/tracing
[ -d $T/instances ] || mount -t tracefs nodev $T
A=$T/instances/kf_sched1
B=$T/instances/kf_irq2
for I in $A $B; do rmdir $I 2>/dev/null || true; mkdir $I; echo 64 > $I/buffer_size_kb; done
trap 'for I in $A $B; do [ -d $I ] && { echo 0 > $I/tracing_on; rmdir $I; } 2>/dev/null; done; true' EXIT
for e in sched_switch sched_waking sched_wakeup sched_process_exit; do echo 1 > $A/events/sched/$e/enable; done
for e in irq_handler_entry irq_handler_exit softirq_entry softirq_exit; do echo 1 > $B/events/irq/$e/enable; done
echo 1 > $A/tracing_on
echo 1 > $B/tracing_on
python3 -c 'import time
t = time.monotonic()
while time.monotonic() - t < 0.2:
    time.sleep(0.001)'
echo 0 > $A/tracing_on
echo 0 > $B/tracing_on
trace-cmd extract -B kf_sched1 -B kf_irq2 -o "$out/kf.B2.dat" > /dev/null 2>&1
trace-cmd report -i "$out/kf.B2.dat" > "$out/kf.tc-report-B2.txt"
rm -f "$out/kf.B2.dat"
gzip -9 -n -f "$out/kf.tc-report-B2.txt"
