# Shared by vmcore_fixtures/build.sh (fixture kernels built from source) and vmcore_fixtures/stock.sh
# (Debian's stock kernels from apt): the case table, the initramfs, one QEMU boot with its kdump
# capture, and the retries.  Sourced, not run.  The caller sets:
#   KIMAGE       the kernel image QEMU boots (and the guest kexec-loads as the capture kernel)
#   KWORK        the scratch directory (initramfs trees and images are written there)
#   GUEST_MEM    guest RAM in MiB
#   OUT_IMG      size of the output disk the capture kernel writes its tar stream to (64M by default)
#   TIMEOUT_SCALE  the cases' timeouts are multiplied by it (1 by default; a stock kernel boots slower)
# shellcheck shell=bash

# name | kf_case | extra kernel parameters | timeout (s)
CASES=(
	"01-null-member|null_member||300"
	"02-bug-on|bug_on||300"
	"03-warn-on|warn_on|panic_on_warn=1|300"
	"04-hung-task|hung_task|hung_task_panic=1 sysctl.kernel.hung_task_timeout_secs=5|300"
	"05-soft-lockup|soft_lockup|softlockup_panic=1 watchdog_thresh=3|300"
	"06-list-corrupt|list_corrupt||300"
	"07-sysrq-c|sysrq_c||300"
	"08-slab-leak|slab_leak|slab_nomerge|600"
	"09-oom|oom|sysctl.vm.panic_on_oom=1|300"
	"10-use-after-free|use_after_free|slub_debug=FZPU,kf_conn|300"
	"11-abba-deadlock|abba_deadlock|hung_task_panic=1 sysctl.kernel.hung_task_timeout_secs=5|300"
	"12-double-free|double_free||300"
	"13-list-overflow|list_overflow||300"
	"14-spin-deadlock|spin_deadlock|softlockup_panic=1 watchdog_thresh=3|300"
)

log() { printf '[build %(%H:%M:%S)T] %s\n' -1 "$*" >&2; }

copy_with_libs() { # copy_with_libs ROOT BINARY...
	local root="$1" bin lib
	shift
	for bin in "$@"; do
		install -D -m 0755 "$bin" "$root$bin"
		for lib in $(ldd "$bin" | grep -o '/[^ ]*'); do
			[[ -e $root$lib ]] || install -D -m 0755 "$lib" "$root$lib"
		done
	done
}

# make_initramfs KO [EXTRA_ROOT]: $KWORK/capture.cpio.gz (the capture kernel's initrd) and
# $KWORK/main.cpio.gz (the crashing kernel's: the same tree plus $KIMAGE and the capture initrd in
# /boot).  EXTRA_ROOT, when given, is copied over the tree (a stock kernel's driver modules).
make_initramfs() {
	local ko="$1" extra="${2:-}" root="$KWORK/initramfs" applet
	log "building the initramfs (capture + main)"
	rm -rf "$root"
	mkdir -p "$root"/{bin,sbin,usr/bin,usr/sbin,proc,sys,dev,tmp,boot,lib/modules,lib64}
	cp /bin/busybox "$root/bin/busybox"
	for applet in $(/bin/busybox --list); do
		[[ -e $root/bin/$applet ]] || ln -s busybox "$root/bin/$applet"
	done
	copy_with_libs "$root" /usr/sbin/kexec /usr/bin/makedumpfile
	install -m 0755 "$FIXTURES/initramfs/init" "$root/init"
	gcc -static -O2 -Wall -o "$root/bin/kf_memhog" "$FIXTURES/initramfs/kf_memhog.c"
	install -m 0644 "$ko" "$root/lib/modules/kf_buggy.ko"
	[[ -z $extra ]] || cp -a "$extra/." "$root/"
	# the capture kernel's initrd: everything but /boot
	(cd "$root" && find . -path ./boot -prune -o -print | LC_ALL=C sort |
		cpio -o -H newc --quiet | gzip -9 >"$KWORK/capture.cpio.gz")
	cp "$KIMAGE" "$root/boot/bzImage"
	cp "$KWORK/capture.cpio.gz" "$root/boot/capture.cpio.gz"
	(cd "$root" && find . | LC_ALL=C sort | cpio -o -H newc --quiet | gzip -1 >"$KWORK/main.cpio.gz")
	ls -l "$KWORK"/*.cpio.gz >&2
}

# KVM when the host offers one that runs this guest (a boot + crash + capture takes seconds), else TCG;
# the guest CPU model is qemu64 either way.  KF_ACCEL=kvm|tcg skips the probe.  The probe boots the
# kernel under KVM for up to 30 s and looks for its banner on the serial console: a /dev/kvm that opens
# but never runs the guest (a nested "kvm-pvm" host runs only PVM guests, say) falls back to TCG.
ACCEL="${KF_ACCEL:-}"

pick_accel() {
	[[ -n $ACCEL ]] && return
	ACCEL=tcg
	[[ -w /dev/kvm ]] || return 0
	local probe="$KWORK/kvm-probe.log"
	rm -f "$probe"
	timeout 30 qemu-system-x86_64 -machine q35,accel=kvm -cpu qemu64 -smp 1 -m 128 \
		-kernel "$KIMAGE" -append "console=ttyS0 panic=-1" \
		-display none -monitor none -serial file:"$probe" -no-reboot 2>/dev/null || true
	if grep -q "Linux version" "$probe" 2>/dev/null; then
		ACCEL=kvm
	else
		log "/dev/kvm does not run this guest (no console output in 30 s): using TCG"
	fi
}

run_qemu() { # run_qemu RUNDIR CMDLINE TIMEOUT
	local dir="$1" cmdline="$2" tmo="$3" rc=0
	rm -rf "$dir"
	mkdir -p "$dir"
	truncate -s "${OUT_IMG:-64M}" "$dir/out.img"
	truncate -s 16M "$dir/samples.img"
	pick_accel
	echo "$ACCEL" >"$dir/accel"
	timeout "$tmo" qemu-system-x86_64 -machine q35,accel="$ACCEL" -cpu qemu64 -smp 2 -m "$GUEST_MEM" \
		-kernel "$KIMAGE" -initrd "$KWORK/main.cpio.gz" \
		-append "$cmdline" \
		-drive file="$dir/out.img",format=raw,if=virtio \
		-drive file="$dir/samples.img",format=raw,if=virtio \
		-display none -monitor none -serial file:"$dir/console.log" -no-reboot || rc=$?
	log "qemu exited with $rc"
	mkdir -p "$dir/out"
	tar -C "$dir/out" -xf "$dir/out.img" 2>/dev/null || true
}

# run_case ENTRY DIR CMDLINE: boot CMDLINE plus the case's parameters until the capture kernel saved a
# dump and its log in DIR/out (three attempts); 1 when none did.
run_case() {
	local name kfcase extra tmo dir="$2" attempt
	IFS='|' read -r name kfcase extra tmo <<<"$1"
	for attempt in 1 2 3; do
		log "case $name: booting (kf_case=$kfcase $extra), attempt $attempt"
		run_qemu "$dir" "$3 kf_case=$kfcase $extra" "$((tmo * ${TIMEOUT_SCALE:-1}))"
		printf '%s\n' "$3 kf_case=$kfcase $extra" >"$dir/cmdline"
		[[ -s $dir/out/vmcore && -s $dir/out/dmesg.txt ]] && return 0
		# Under TCG on a loaded host the boot can fail before the case runs ("IO-APIC + timer
		# doesn't work!": the timer check lost its race): boot again.
		log "case $name: no vmcore/dmesg captured: $(grep -m1 -o 'Kernel panic - not syncing: .*' "$dir/console.log" || echo "see $dir/console.log")"
	done
	log "case $name: no vmcore/dmesg captured after $attempt attempts, see $dir/console.log"
	return 1
}

split_samples() { # split_samples IMAGE DESTDIR
	python3 - "$1" "$2" <<'PY'
import pathlib, sys
img, dst = pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2])
data = img.read_bytes()
dst.mkdir(parents=True, exist_ok=True)
n = 0
for i in range(0, len(data), 65536):
    block = data[i : i + 65536]
    text = block.rstrip(b"\0")
    if not text:
        break
    if len(text) == 65536:
        sys.exit(f"sample {n} fills its whole 64 KiB block: truncated")
    (dst / f"sample-{n:04d}.txt").write_bytes(text)
    n += 1
print(f"{n} samples", file=sys.stderr)
PY
}
