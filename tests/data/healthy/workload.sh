#!/bin/bash
# An ordinary mixed load for SECONDS seconds (see record.sh): nothing in it is a problem.
#   workload.sh WORKDIR SECONDS   (WORKDIR holds `big`, a file for gzip to compress)
set -u
work=$1
secs=$2
python3 -c "
import time
end = time.monotonic() + $secs * 0.6
n = 0
while time.monotonic() < end:
    n += 1
" &
timeout "$secs" ls -R /usr > /dev/null 2>&1 &
timeout "$secs" gzip -1 -c "$work/big" > /dev/null &
(command -v crash > /dev/null && timeout "$secs" crash --help > /dev/null 2>&1) &
end=$((SECONDS + secs))
while [ $SECONDS -lt $end ]; do
    ps aux > /dev/null
    grep -c processor /proc/cpuinfo > /dev/null
    sleep 0.2
done
wait
