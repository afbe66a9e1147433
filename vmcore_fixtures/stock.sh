#!/usr/bin/env bash
# Crash dumps of Debian's stock 6.12 kernel, made as a Debian user's kdump-tools makes them, to check
# `kforensic vmcore` on a kernel the fixtures never had.  Nothing is written to the repository.
#
#   vmcore_fixtures/stock.sh [deps] [unpack] [module] [initramfs] [cases [NAME...]] | all
#
# deps       apt: the kernel's headers (installed: kf_buggy builds against them), the unsigned image
#            and its -dbg package (downloaded only: the image boots in QEMU, the -dbg's vmlinux is
#            extracted), the tools the guest runs (kexec-tools, makedumpfile, busybox)
# unpack     the image and its modules (depmod) into $STOCK_WORK/root, the -dbg vmlinux beside it
# module     kf_buggy.ko against the installed headers (a copy of the source: the checkout stays clean)
# initramfs  the fixtures' initramfs (qemu.sh) plus virtio_blk and what it needs, in load order
# cases      boots each case in QEMU (KVM when it works, else TCG) with crashkernel=; the guest kexec-loads
#            the same kernel as the capture kernel, which runs bookworm's makedumpfile 1.7.2 with
#            `-c -d 31` and `--dump-dmesg` (kdump-tools' defaults); dump, log and console land in
#            $STOCK_OUT/<case>/ (vmcore, dmesg.txt, console.log, cmdline)
#
# STOCK_DIR (default /work/stock/6.12) holds the outputs, STOCK_DIR/work the scratch; KF_RUN_TAG, when set,
# is appended to each case's directory name (the same case again: which pages a level-31 dump of 6.12
# lacks changes from boot to boot).  The kernel is
# STOCK_RELEASE / STOCK_VERSION (a 6.12 of bookworm-security by default).  Run it under `nice`.
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
FIXTURES="$HERE"
STOCK_RELEASE="${STOCK_RELEASE:-6.12.118+deb12}"
STOCK_VERSION="${STOCK_VERSION:-6.12.118-1~deb12u1}"
KREL="$STOCK_RELEASE-amd64"
STOCK_OUT="${STOCK_DIR:-/work/stock/6.12}"
KWORK="$STOCK_OUT/work"
ROOT="$KWORK/root"
HEADERS="/usr/src/linux-headers-$KREL"
KIMAGE="$ROOT/boot/vmlinuz-$KREL"
VMLINUX="$STOCK_OUT/vmlinux-$KREL"
GUEST_MEM="${KF_GUEST_MEM:-512}"
# Debian's kdump-tools reserves crashkernel=384M-:128M; a little more here, since the capture
# initramfs holds the dump in RAM (tmpfs) before writing it out.
CRASHKERNEL="${KF_CRASHKERNEL:-192M}"
COMMON_CMDLINE="console=ttyS0 crashkernel=$CRASHKERNEL oops=panic panic=10"
OUT_IMG=512M
TIMEOUT_SCALE="${KF_TIMEOUT_SCALE:-3}"
# shellcheck source=vmcore_fixtures/qemu.sh
source "$HERE/qemu.sh"

stage_deps() {
	log "installing the headers of $KREL and the guest's tools (apt)"
	DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
		"linux-headers-$KREL=$STOCK_VERSION" build-essential cpio xz-utils busybox-static \
		kexec-tools makedumpfile qemu-system-x86 kmod
	mkdir -p "$KWORK/debs"
	log "downloading linux-image-$KREL-unsigned and -dbg (about 1.1 GB; not installed)"
	local pkg
	for pkg in "linux-image-$KREL-unsigned" "linux-image-$KREL-dbg"; do
		[[ -s $KWORK/debs/${pkg}_${STOCK_VERSION/:/%3a}_amd64.deb ]] ||
			(cd "$KWORK/debs" && apt-get download "$pkg=$STOCK_VERSION")
	done
}

stage_unpack() {
	local debs="$KWORK/debs"
	rm -rf "$ROOT"
	mkdir -p "$ROOT"
	dpkg-deb -x "$debs/linux-image-${KREL}-unsigned_${STOCK_VERSION/:/%3a}_amd64.deb" "$ROOT"
	depmod -b "$ROOT" "$KREL"
	log "extracting vmlinux from the -dbg package (decompresses the whole 1 GB package)"
	dpkg-deb --fsys-tarfile "$debs/linux-image-${KREL}-dbg_${STOCK_VERSION/:/%3a}_amd64.deb" |
		tar -x -O "./usr/lib/debug/boot/vmlinux-$KREL" >"$VMLINUX.tmp"
	mv "$VMLINUX.tmp" "$VMLINUX"
	ls -l "$KIMAGE" "$VMLINUX" >&2
}

stage_module() {
	local src="$KWORK/kf_buggy"
	log "building kf_buggy.ko against $HEADERS"
	rm -rf "$src"
	cp -a "$HERE/kf_buggy" "$src"
	make -C "$HEADERS" M="$src" modules >"$KWORK/module-build.log" 2>&1 || {
		tail -20 "$KWORK/module-build.log" >&2
		exit 1
	}
	install -m 0644 "$src/kf_buggy.ko" "$STOCK_OUT/kf_buggy.ko"
}

stage_initramfs() {
	local extra="$KWORK/extra" dep name
	rm -rf "$extra"
	mkdir -p "$extra/lib/modules"
	# virtio_blk and its dependencies, in the order modprobe would load them (decompressed: busybox's
	# insmod reads no xz)
	: >"$extra/lib/modules/load.list"
	while read -r dep; do
		name="$(basename "${dep%.xz}")"
		xz -dc "$dep" >"$extra/lib/modules/$name"
		echo "$name" >>"$extra/lib/modules/load.list"
	done < <(modprobe -d "$ROOT" -S "$KREL" --show-depends virtio_blk | awk '$1 == "insmod" {print $2}')
	log "drivers loaded by init: $(tr '\n' ' ' <"$extra/lib/modules/load.list")"
	make_initramfs "$STOCK_OUT/kf_buggy.ko" "$extra"
}

stage_cases() {
	local want=("$@") entry name kfcase extra tmo dir dest
	for entry in "${CASES[@]}"; do
		IFS='|' read -r name kfcase extra tmo <<<"$entry"
		if ((${#want[@]})) && [[ " ${want[*]} " != *" $name "* ]]; then
			continue
		fi
		dir="$KWORK/runs/$name${KF_RUN_TAG:-}"
		if ! run_case "$entry" "$dir" "$COMMON_CMDLINE"; then
			continue # the other cases still run; the log says which failed
		fi
		dest="$STOCK_OUT/$name${KF_RUN_TAG:-}"
		rm -rf "$dest"
		mkdir -p "$dest"
		cp "$dir/out/vmcore" "$dir/out/dmesg.txt" "$dir/console.log" "$dir/cmdline" "$dest/"
		[[ $kfcase != slab_leak ]] || split_samples "$dir/samples.img" "$dest/snapshots"
		log "case $name: vmcore $(stat -c %s "$dest/vmcore") bytes in $dest"
	done
}

main() {
	local stages=("$@")
	((${#stages[@]})) || stages=(all)
	mkdir -p "$KWORK"
	case "${stages[0]}" in
	all) stage_deps && stage_unpack && stage_module && stage_initramfs && stage_cases ;;
	deps) stage_deps ;;
	unpack) stage_unpack ;;
	module) stage_module ;;
	initramfs) stage_initramfs ;;
	cases) stage_cases "${stages[@]:1}" ;;
	*)
		echo "unknown stage ${stages[0]}" >&2
		exit 2
		;;
	esac
}

main "$@"; exit  # on one line: bash reads a script as it runs, so edits to this file cannot reach a running build
