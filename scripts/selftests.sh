#!/usr/bin/env bash
# The kernel's own net selftests for make regress: the test directories of
# KERNEL's pristine tree (the same files for the baseline and the patched
# kernel), the helper programs the chosen tests run, compiled for ARCH
# against the tree's UAPI headers and the Debian userland's libc, and the
# XDP object veth.sh and the GRO tests attach. Packed as an initramfs
# archive whose files land in the guest's Debian userland under
# /rootfs/kselftest (scripts/rootfs.sh, ROOTFS=1 scripts/qemu.sh).
#
# Only what the tests of scripts/regress.sh need is built: the full
# 'make -C tools/testing/selftests TARGETS=net' wants libbpf, the YNL
# library, liburing and more, for tests this project does not run.
#
# usage: ARCH=x86_64|arm64 KERNEL=7.3|6.12 scripts/selftests.sh
# output: build/selftests/<version>-<arch>/{kselftest/,kselftest.cpio}

# shellcheck source=scripts/lib.sh
. "$(dirname "$0")/lib.sh"

[ $# -eq 0 ] || { echo "usage: ARCH=x86_64|arm64 KERNEL=7.3|6.12 $0" >&2; exit 2; }
BASELINE=1 load_params
KVER=$(kernel_version)
SRC=$(src_dir baseline)
OUT=$BUILD/selftests/$KVER-$ARCH
STAGING=$OUT/kselftest
LOG_TAG="$KVER $ARCH"
[ -f "$SRC/Makefile" ] || die "no source tree at $SRC (run scripts/tree.sh baseline)"
ST=$SRC/tools/testing/selftests
# the directories the tests live in, and what their scripts source
DIRS=(kselftest net drivers/net/netdevsim drivers/net/lib)
# helper programs: source under $ST, output next to it in the stage
HELPERS=(net/udpgso_bench_rx net/udpgso_bench_tx)
# BPF objects the scripts attach with 'ip link set ... xdp object'
# (net/lib/ in 7.3, net/ in 6.12)
BPF_OBJS=(net/lib/xdp_dummy.bpf net/xdp_dummy.bpf)

stamp=$( (cat "$0"; git -C "$SRC" rev-parse HEAD; echo "$ARCH") | sha256sum | cut -c1-16)
if [ "$(cat "$OUT/.stamp" 2>/dev/null)" = "$stamp" ] && [ -f "$OUT/kselftest.cpio" ]; then
	log "up to date: $OUT/kselftest.cpio"
	exit 0
fi
rm -rf "$OUT"
mkdir -p "$STAGING"

log "UAPI headers"
make -s -C "$SRC" O="$OUT/hdr-obj" ARCH="$KARCH" INSTALL_HDR_PATH="$OUT/usr" \
	headers_install >"$OUT/build.log" 2>&1 || die "headers_install failed, see $OUT/build.log"
rm -rf "$OUT/hdr-obj"

for d in "${DIRS[@]}"; do
	[ -d "$ST/$d" ] || continue
	mkdir -p "$STAGING/$d"
	cp -a "$ST/$d/." "$STAGING/$d/"
done
# kselftest.h and friends, which the helpers include as "../kselftest.h"
cp -a "$ST"/kselftest*.h "$STAGING/"

CC=${CROSS_COMPILE}gcc
command -v "$CC" >/dev/null || die "no $CC (run scripts/setup.sh)"
for h in "${HELPERS[@]}"; do
	log "building $h"
	(cd "$ST/${h%/*}" && $CC -Wall -O2 -g -D_GNU_SOURCE -isystem "$OUT/usr/include" -I"$ST" \
		-o "$STAGING/$h" "${h##*/}.c" -lpthread) >>"$OUT/build.log" 2>&1 ||
		die "building $h failed, see $OUT/build.log"
done

# bpf_helpers.h includes the helper definitions which libbpf's build
# generates from the UAPI header; generate them the same way.
mkdir -p "$OUT/bpf/bpf"
cp "$SRC"/tools/lib/bpf/bpf_helpers.h "$SRC"/tools/lib/bpf/bpf_endian.h \
	"$SRC"/tools/lib/bpf/bpf_tracing.h "$OUT/bpf/bpf/" 2>/dev/null || true
python3 "$SRC/scripts/bpf_doc.py" --header --file "$SRC/include/uapi/linux/bpf.h" \
	>"$OUT/bpf/bpf/bpf_helper_defs.h" 2>>"$OUT/build.log" ||
	die "bpf_doc.py failed, see $OUT/build.log"
command -v clang >/dev/null || die "no clang (run scripts/setup.sh)"
for b in "${BPF_OBJS[@]}"; do
	[ -f "$ST/$b.c" ] || continue
	log "building $b.o"
	clang -O2 -g --target=bpf -I"$OUT/usr/include" -I"$OUT/bpf" \
		-idirafter /usr/include -idirafter "/usr/include/$GNU_TRIPLET" \
		-c "$ST/$b.c" -o "$STAGING/$b.o" >>"$OUT/build.log" 2>&1 ||
		die "building $b.o failed, see $OUT/build.log"
done

# gen_init_cpio entries under /rootfs/kselftest
cpio_list "$STAGING" /rootfs/kselftest >"$OUT/kselftest.list"
"$(gen_init_cpio)" "$OUT/kselftest.list" >"$OUT/kselftest.cpio"
echo "$stamp" >"$OUT/.stamp"
log "packed: $(du -h "$OUT/kselftest.cpio" | cut -f1), $(wc -l <"$OUT/kselftest.list") entries"
