#!/bin/sh
# Re-record the profile test data (as a user allowed to use perf; any Linux with perf and gcc).
# Each *.perf.txt.gz is the `perf script` output of one recording (paths of the temporary build
# directory replaced by /tmp/profile-workload), each *.report.txt.gz the matching
# `perf report --stdio --no-children --sort sym`, the reference for the hotspot shares.
# Each *.folded.gz is what FlameGraph's stackcollapse-perf.pl (not part of kforensic) makes of the
# text: `./record.sh folded PATH/TO/stackcollapse-perf.pl` remakes them. lost.perf.txt.gz is an excerpt
# of a `perf record -a -g -F 999 -- sleep 15` recording: samples of tasks perf lost (`:-1    -1`).
# `./record.sh deleted` remakes only deleted.perf.txt.gz: one second of the mixed workload whose binary
# was unlinked while it ran (perf names its DSO `(/path (deleted))`), and deleted.report.txt.gz, its
# `perf report --stdio --no-children --sort dso -g none`.
set -eu
cd "$(dirname "$0")"
if [ "${1:-}" = deleted ]; then
  out=$(mktemp -d)
  gcc -O2 -g -fno-omit-frame-pointer -o "$out/mixed" src/mixed.c
  "$out/mixed" 3 > /dev/null & pid=$!
  sleep 0.2
  rm "$out/mixed"
  perf record -q -g -F 499 -p "$pid" -o "$out/deleted.data" -- sleep 1 > /dev/null 2>&1
  wait "$pid"
  perf script -i "$out/deleted.data" 2> /dev/null | sed "s#$out/#/tmp/profile-workload/#g" | gzip -9n > deleted.perf.txt.gz
  perf report -i "$out/deleted.data" --stdio --no-children --sort dso -g none 2> /dev/null | gzip -9n > deleted.report.txt.gz
  rm -rf "$out"
  exit 0
fi
if [ "${1:-}" = folded ]; then
  for w in mixed contend kernel interp jit lost; do zcat "$w.perf.txt.gz" | perl "$2" | gzip -9n > "$w.folded.gz"; done
  exit 0
fi
perf=$(command -v perf || ls /usr/bin/perf_* | head -1)
out=$(mktemp -d)
gcc -O2 -g -fno-omit-frame-pointer -o "$out/mixed" src/mixed.c
gcc -O2 -g -fno-omit-frame-pointer -pthread -o "$out/contend" src/contend.c
gcc -O2 -g -o "$out/jit" src/jit.c
rec() { name=$1; shift; "$perf" record -q -g -F 999 -o "$out/$name.data" -- "$@" >/dev/null; }
rec mixed "$out/mixed" 0.5
rec contend "$out/contend" 1.0
rec kernel dd if=/dev/zero of="$out/file" bs=1M count=200 conv=fsync status=none
rec interp python3 src/interp.py 3000000
rec jit "$out/jit" 4
# Without call chains, and two events in one recording (bad-input cases).
"$perf" record -q -F 999 -o "$out/flat.data" -- "$out/mixed" 0.1 >/dev/null
"$perf" record -q -g -F 999 -e cpu-clock -e page-faults -o "$out/events.data" -- "$out/mixed" 0.1 >/dev/null
for w in flat events; do
  "$perf" script -i "$out/$w.data" | sed "s#$out/#/tmp/profile-workload/#g" | gzip -9n > "$w.perf.txt.gz"
done
for w in mixed contend kernel interp jit; do
  "$perf" script -i "$out/$w.data" | sed "s#$out/#/tmp/profile-workload/#g" | gzip -9n > "$w.perf.txt.gz"
  "$perf" report -i "$out/$w.data" --stdio --no-children --sort sym 2>/dev/null | gzip -9n > "$w.report.txt.gz"
done
zcat jit.perf.txt.gz | grep -o "/tmp/perf-[0-9]*\.map" | sort -u | xargs -r rm -f
rm -rf "$out"
