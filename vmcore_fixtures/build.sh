#!/usr/bin/env bash
# Regenerate the kforensic vmcore fixtures from Debian 12 apt packages alone.
#
#   vmcore_fixtures/build.sh [deps] [kernel] [module] [initramfs] [cases [NAME...]]
#                            [sysroots] [payload] [manifest] | all
#
# Without arguments (or with "all") every stage runs in order.  Scratch output
# (kernel tree, images, QEMU run directories) goes to vmcore_fixtures/work/,
# which is git-ignored; the committed payload is written to cases/,
# sysroots/, vmlinux.xz, kf_buggy.ko and MANIFEST.json.  See README.md.
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
WORK="$HERE/work"
KSRC="$WORK/linux-source-6.1"
JOBS="$(nproc)"
GUEST_MEM="${KF_GUEST_MEM:-256}"
CRASHKERNEL="${KF_CRASHKERNEL:-96M}"
COMMON_CMDLINE="console=ttyS0 crashkernel=$CRASHKERNEL oops=panic panic=10"

# Reproducible kernel: no build time, user or host in the version string, and
# DWARF paths that name Debian's source layout instead of this checkout's
# scratch directory (the same tree on every machine, so rebuilding the same
# sources gives the same vmlinux).
export KBUILD_BUILD_TIMESTAMP="${KBUILD_BUILD_TIMESTAMP:-2024-01-01 00:00:00 UTC}"
export KBUILD_BUILD_USER="${KBUILD_BUILD_USER:-kforensic}"
export KBUILD_BUILD_HOST="${KBUILD_BUILD_HOST:-fixtures}"
export KBUILD_BUILD_VERSION="${KBUILD_BUILD_VERSION:-1}"
KERNEL_PREFIX_MAP="-fdebug-prefix-map=$KSRC=/usr/src/linux-source-6.1"

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

stage_deps() {
	log "installing build dependencies (apt)"
	apt-get update
	DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
		linux-source-6.1 build-essential bc bison flex libelf-dev libssl-dev \
		dwarves cpio xz-utils busybox-static kexec-tools makedumpfile \
		qemu-system-x86 gdb binutils kmod python3
}

stage_kernel() {
	mkdir -p "$WORK"
	if [[ ! -d $KSRC ]]; then
		log "unpacking /usr/src/linux-source-6.1.tar.xz"
		tar -C "$WORK" -xf /usr/src/linux-source-6.1.tar.xz
	fi
	log "configuring: tinyconfig + kernel.config"
	make -C "$KSRC" ARCH=x86_64 tinyconfig >/dev/null
	"$KSRC/scripts/kconfig/merge_config.sh" -m -O "$KSRC" "$KSRC/.config" "$HERE/kernel.config" >/dev/null
	make -C "$KSRC" ARCH=x86_64 olddefconfig >/dev/null
	local line missing=0
	while read -r line; do
		[[ -z $line || $line == \#* ]] && continue
		if ! grep -qx "$line" "$KSRC/.config"; then
			log "config fragment line not honoured: $line"
			missing=1
		fi
	done <"$HERE/kernel.config"
	((missing == 0)) || exit 1
	log "building bzImage + vmlinux with -j$JOBS (about 7 minutes on 2 cores)"
	make -C "$KSRC" ARCH=x86_64 KCFLAGS="$KERNEL_PREFIX_MAP" KAFLAGS="$KERNEL_PREFIX_MAP" -j"$JOBS" \
		bzImage vmlinux modules_prepare >"$WORK/kernel-build.log" 2>&1
}

stage_module() {
	log "building kf_buggy.ko (-g) against $KSRC"
	make -C "$KSRC" ARCH=x86_64 M="$HERE/kf_buggy" clean >/dev/null
	make -C "$KSRC" ARCH=x86_64 M="$HERE/kf_buggy" modules >"$WORK/module-build.log" 2>&1
	cp "$HERE/kf_buggy/kf_buggy.ko" "$WORK/kf_buggy.ko"
	make -C "$KSRC" ARCH=x86_64 M="$HERE/kf_buggy" clean >/dev/null
}

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

stage_initramfs() {
	local root="$WORK/initramfs" applet
	log "building the initramfs (capture + main)"
	rm -rf "$root"
	mkdir -p "$root"/{bin,sbin,usr/bin,usr/sbin,proc,sys,dev,tmp,boot,lib/modules,lib64}
	cp /bin/busybox "$root/bin/busybox"
	for applet in $(/bin/busybox --list); do
		[[ -e $root/bin/$applet ]] || ln -s busybox "$root/bin/$applet"
	done
	copy_with_libs "$root" /usr/sbin/kexec /usr/bin/makedumpfile
	install -m 0755 "$HERE/initramfs/init" "$root/init"
	gcc -static -O2 -Wall -o "$root/bin/kf_memhog" "$HERE/initramfs/kf_memhog.c"
	install -m 0644 "$WORK/kf_buggy.ko" "$root/lib/modules/kf_buggy.ko"
	# the capture kernel's initrd: everything but /boot
	(cd "$root" && find . -path ./boot -prune -o -print | LC_ALL=C sort |
		cpio -o -H newc --quiet | gzip -9 >"$WORK/capture.cpio.gz")
	cp "$KSRC/arch/x86/boot/bzImage" "$root/boot/bzImage"
	cp "$WORK/capture.cpio.gz" "$root/boot/capture.cpio.gz"
	(cd "$root" && find . | LC_ALL=C sort | cpio -o -H newc --quiet | gzip -1 >"$WORK/main.cpio.gz")
	ls -l "$WORK"/*.cpio.gz >&2
}

run_qemu() { # run_qemu RUNDIR CMDLINE TIMEOUT
	local dir="$1" cmdline="$2" tmo="$3" rc=0
	rm -rf "$dir"
	mkdir -p "$dir"
	truncate -s 64M "$dir/out.img"
	truncate -s 16M "$dir/samples.img"
	timeout "$tmo" qemu-system-x86_64 -machine q35,accel=tcg -cpu qemu64 -smp 2 -m "$GUEST_MEM" \
		-kernel "$KSRC/arch/x86/boot/bzImage" -initrd "$WORK/main.cpio.gz" \
		-append "$cmdline" \
		-drive file="$dir/out.img",format=raw,if=virtio \
		-drive file="$dir/samples.img",format=raw,if=virtio \
		-display none -monitor none -serial file:"$dir/console.log" -no-reboot || rc=$?
	log "qemu exited with $rc"
	mkdir -p "$dir/out"
	tar -C "$dir/out" -xf "$dir/out.img" 2>/dev/null || true
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

stage_cases() {
	local want=("$@") entry name kfcase extra tmo dir dest
	for entry in "${CASES[@]}"; do
		IFS='|' read -r name kfcase extra tmo <<<"$entry"
		if ((${#want[@]})) && [[ " ${want[*]} " != *" $name "* ]]; then
			continue
		fi
		dir="$WORK/runs/$name"
		log "case $name: booting (kf_case=$kfcase $extra)"
		run_qemu "$dir" "$COMMON_CMDLINE kf_case=$kfcase $extra" "$tmo"
		if [[ ! -s $dir/out/vmcore || ! -s $dir/out/dmesg.txt ]]; then
			log "case $name: no vmcore/dmesg captured, see $dir/console.log"
			exit 1
		fi
		dest="$HERE/cases/$name"
		rm -rf "$dest"
		mkdir -p "$dest"
		cp "$dir/out/vmcore" "$dest/vmcore"
		cp "$dir/out/dmesg.txt" "$dest/dmesg.txt"
		cp "$dir/console.log" "$dest/console.log"
		if [[ $kfcase == slab_leak ]]; then
			split_samples "$dir/samples.img" "$dest/snapshots"
		fi
		printf '%s\n' "$COMMON_CMDLINE kf_case=$kfcase $extra" >"$dir/cmdline"
		log "case $name: vmcore $(stat -c %s "$dest/vmcore") bytes"
	done
	python3 "$HERE/ground_truth.py" --work "$WORK" --fixtures "$HERE"
}

stage_sysroots() {
	local kind dir cmdline
	for kind in crash-loaded no-crashkernel; do
		dir="$WORK/runs/sysroot-$kind"
		if [[ $kind == crash-loaded ]]; then
			cmdline="$COMMON_CMDLINE kf_case=sysroot-$kind"
		else
			cmdline="console=ttyS0 oops=panic panic=10 kf_case=sysroot-$kind"
		fi
		log "sysroot $kind: booting"
		run_qemu "$dir" "$cmdline" 300
		[[ -s $dir/out/proc/cmdline ]] || {
			log "sysroot $kind: nothing captured"
			exit 1
		}
		rm -rf "$HERE/sysroots/$kind"
		mkdir -p "$HERE/sysroots/$kind"
		cp -r "$dir/out/." "$HERE/sysroots/$kind/"
		cp "$dir/console.log" "$HERE/sysroots/$kind/console.log"
	done
}

stage_payload() {
	log "copying kf_buggy.ko"
	install -m 0644 "$WORK/kf_buggy.ko" "$HERE/kf_buggy.ko"
	if [[ -f $HERE/vmlinux.xz && $HERE/vmlinux.xz -nt $KSRC/vmlinux ]]; then
		log "vmlinux.xz is newer than vmlinux, not recompressing"
		return
	fi
	log "compressing vmlinux (xz -6, about 2 minutes)"
	xz -6 -T"$JOBS" -c "$KSRC/vmlinux" >"$HERE/vmlinux.xz.tmp"
	mv "$HERE/vmlinux.xz.tmp" "$HERE/vmlinux.xz"
}

stage_manifest() {
	python3 "$HERE/ground_truth.py" --work "$WORK" --fixtures "$HERE" --manifest
}

main() {
	local stages=("$@")
	((${#stages[@]})) || stages=(all)
	if [[ ${stages[0]} == all ]]; then
		local t0=$SECONDS
		stage_kernel
		stage_module
		stage_initramfs
		stage_cases
		stage_sysroots
		stage_payload
		stage_manifest
		log "all stages done in $((SECONDS - t0)) s"
		return
	fi
	case "${stages[0]}" in
	deps) stage_deps ;;
	kernel) stage_kernel ;;
	module) stage_module ;;
	initramfs) stage_initramfs ;;
	cases) stage_cases "${stages[@]:1}" ;;
	sysroots) stage_sysroots ;;
	payload) stage_payload ;;
	manifest) stage_manifest ;;
	*)
		echo "unknown stage ${stages[0]}" >&2
		exit 2
		;;
	esac
}

main "$@"
